import AzureStorage
import Foundation
import SeedKit

/// `azseed scan`: a dataset inferred from what a target holds, written to `folder` (which may
/// not overlap `storageFolder`, the embedded storage's folder); `observer` hears the entities
/// read.
public func scanAccount(
    _ options: ScanOptions, of target: RunTarget, storageFolder: URL, into folder: URL,
    observer: any RunObserver = SilentObserver()
) async throws -> ScanReport {
    let embedded = target.embeddedDataDirectory
    try await BlockingPool.run {
        // Scanning reads: an embedded folder that does not exist is a mistyped one, not storage to create.
        if let embedded, !FileManager.default.fileExists(atPath: embedded.path) {
            throw RunError("\(embedded.relativePath) holds no embedded storage; scan the folder an apply used, or an account")
        }
        try FolderOverlap.check(output: folder, inputs: [("the storage's data folder", storageFolder)])
        try FolderOverlap.checkNoDataFolder(output: folder)
    }
    return try await withSession(target, observer: observer) { session in
        try await Scanner(run: session.run).scan(options, into: folder) { observer.reading($0) }
    }
}

/// `azseed scan --snapshot`: a dataset inferred from a snapshot folder, written to `folder`.
public func scanSnapshot(_ snapshot: URL, _ options: ScanOptions, storageFolder: URL, into folder: URL) async throws -> ScanReport {
    try await BlockingPool.run {
        try FolderOverlap.check(output: folder, inputs: [("the storage's data folder", storageFolder), ("the snapshot", snapshot)])
        try FolderOverlap.checkNoDataFolder(output: folder)
    }
    return try await Scanner.scan(snapshot: snapshot, options, into: folder)
}
