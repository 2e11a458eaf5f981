import AzureStorage
import Foundation
import SeedKit

/// What an export wrote, and of which target.
public struct ExportedSnapshot: Sendable {
    public var summary: SnapshotSummary
    public var activity: RequestActivity
    public var target: PlanTarget
    public var shard: Shard?
}

/// What to export: containers and tables by name, else the dataset's (the dataset folder, or
/// the shipped SpeakEasy one when `dataset` is nil and a list is empty); `exportID` names the
/// parts of a sharded export. `storageFolder` is the embedded storage's folder, an input the
/// output may not overlap even with an account named (an `azseed emulator` may serve it).
public struct ExportRequest: Sendable {
    public var containers: [String]
    public var tables: [String]
    public var dataset: URL?
    public var storageFolder: URL
    public var out: URL
    public var force: Bool
    public var exportID: String?

    public init(containers: [String], tables: [String], dataset: URL?, storageFolder: URL, out: URL, force: Bool, exportID: String? = nil) {
        self.containers = containers
        self.tables = tables
        self.dataset = dataset
        self.storageFolder = storageFolder
        self.out = out
        self.force = force
        self.exportID = exportID
    }
}

/// `azseed export`: a snapshot of the target's containers and tables (every blob, every entity
/// of every partition, or this shard's part), written as `generate` writes one. The output
/// folder is checked against every input before the target is opened; `observer` hears the
/// entities read.
public func exportSnapshot(_ request: ExportRequest, from target: RunTarget, observer: any RunObserver = SilentObserver()) async throws
    -> ExportedSnapshot
{
    if target.shard != nil, request.exportID == nil {
        throw RunError("a sharded export needs an export id that its processes share, so the parts of one export can be told from another's")
    }
    let (given, givenTables) = (distinct(request.containers), distinct(request.tables))
    let (dataset, out, storageFolder) = (request.dataset, request.out, request.storageFolder)
    // Loading the dataset and looking at folders block: on the blocking threads.
    let (datasetName, chosenContainers, chosenTables) = try await BlockingPool.run { () throws -> (String?, [String], [String]) in
        var inputs: [(what: String, folder: URL)] = [("the storage's data folder", storageFolder)]
        var (name, containers, tables): (String?, [String], [String]) = (nil, given, givenTables)
        if containers.isEmpty || tables.isEmpty || dataset != nil {
            let loaded = try Dataset.load(directory: try dataset ?? DatasetLocator.defaultDataset())
            name = loaded.name
            inputs += loaded.inputFolders
            if containers.isEmpty { containers = loaded.containers.map(\.name) }
            if tables.isEmpty { tables = loaded.tables.map(\.name) }
        }
        try FolderOverlap.check(output: out, inputs: inputs)
        try FolderOverlap.checkNoDataFolder(output: out)
        return (name, containers, tables)
    }
    return try await withSession(target, observer: observer) { session in
        let started = Date()
        var exporter = Exporter(run: session.run)
        exporter.exportID = request.exportID
        var summary = try await exporter.export(
            containers: chosenContainers, tables: chosenTables, dataset: datasetName, to: out, force: request.force
        ) {
            observer.reading($0)
        }
        summary.seconds = Date().timeIntervalSince(started)
        return ExportedSnapshot(summary: summary, activity: session.run.configuration.activity, target: session.run.target, shard: session.run.shard)
    }
}

/// `azseed snapshot merge`: the parts of one sharded export joined into the folder an unsharded
/// export writes, byte for byte. Reads, hashes and copies files: on the blocking threads.
public func mergeSnapshots(_ parts: [URL], into out: URL, force: Bool) async throws -> SnapshotSummary {
    try await BlockingPool.run {
        try FolderOverlap.check(output: out, inputs: parts.map { ("a snapshot being merged", $0) })
        return try SnapshotMerge.merge(parts, into: out, force: force)
    }
}

/// Names given twice, once (names compared by their bytes).
private func distinct(_ names: [String]) -> [String] {
    var seen: Set<ExactString> = []
    return names.filter { seen.insert(ExactString($0)).inserted }
}
