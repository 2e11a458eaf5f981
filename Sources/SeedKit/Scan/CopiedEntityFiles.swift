import AzureStorage
import Foundation
import Synchronization

/// The entity files `scan --copy-values` writes: each partition's entities as they are, one
/// line of OData JSON an entity (keys and EDM types included, the snapshot table format), one
/// file a partition — `entities/<table>/<n>.jsonl`, numbered in the order the partitions are
/// read (PartitionKey byte order, the service's and a snapshot's), so the same account always
/// gives the same files. The dataset's `entities:` kinds name them; generating the dataset
/// gives back every entity byte for byte.
public final class CopiedEntityFiles: Sendable {
    /// The dataset folder the files are written under.
    let folder: URL
    /// "table\0partition" → the file's path in the dataset; per table, partitions so far.
    private let state = Mutex<(paths: [ExactString: String], perTable: [String: Int])>(([:], [:]))

    public init(folder: URL) { self.folder = folder }

    /// Appends `entities` (of table `table`, in the order read) to their partitions' files.
    /// Writes files: call it from a thread that may block.
    public func append(_ entities: some Sequence<TableEntity>, table: String) throws {
        var lines: [(path: String, bytes: [UInt8])] = []
        for entity in entities {
            let path = state.withLock { state -> String in
                let key = ExactString(table + "\u{0}" + entity.partitionKey)
                if let path = state.paths[key] { return path }
                let n = state.perTable[table, default: 0] + 1
                state.perTable[table] = n
                let path = "entities/\(table)/\(n).jsonl"
                state.paths[key] = path
                return path
            }
            if lines.last?.path != path { lines.append((path, [])) }
            EntityJSONEncoder.append(entity, to: &lines[lines.count - 1].bytes)
            lines[lines.count - 1].bytes.append(UInt8(ascii: "\n"))
        }
        for (path, bytes) in lines {
            let file = folder.appendingPathComponent(path)
            if !FileManager.default.fileExists(atPath: file.path) {
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                guard FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                    throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: file.path])
                }
            }
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: bytes)
        }
    }

    /// The file holding a partition's entities, relative to the dataset folder.
    public func path(table: String, partition: String) -> String? {
        state.withLock { $0.paths[ExactString(table + "\u{0}" + partition)] }
    }
}
