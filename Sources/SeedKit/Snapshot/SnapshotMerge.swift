import AzureStorage
import Foundation

/// Joins the partial snapshots of a sharded export (`azseed export --shard I/N`, one folder a
/// shard) into the snapshot one unsharded export writes, byte for byte: blobs in name order,
/// each table's lines merged in (PartitionKey, RowKey) byte order as they were written, and
/// the manifest without the shard. Every part is checked first (``SnapshotReader``); the
/// parts must be shards 0…N-1 of one export, each once.
public enum SnapshotMerge {
    /// Reads and writes files: call it from a thread that may block.
    public static func merge(_ folders: [URL], into destination: URL, force: Bool) throws -> SnapshotSummary {
        guard !folders.isEmpty else { throw SnapshotError("give the folders of the partial snapshots to merge") }
        var parts: [(snapshot: Snapshot, source: JSONValue, shard: Shard, export: String?)] = []
        for folder in folders {
            let snapshot = try SnapshotReader.read(folder)
            let manifest = folder.appendingPathComponent(SnapshotFormat.manifestFile)
            guard let data = FileManager.default.contents(atPath: manifest.path), let root = try? JSONParser.parse(Array(data)),
                case .object(let members)? = root["source"]
            else {
                throw SnapshotError("\(manifest.relativePathForMessages): no source; not a snapshot azseed exported")
            }
            guard let shard = root["source"]?["shard"]?.stringValue.flatMap(Shard.init) else {
                throw SnapshotError(
                    "\(folder.relativePathForMessages): not a partial snapshot (its manifest names no shard); merge the folders \(Setting.exportShards) wrote"
                )
            }
            parts.append(
                (
                    snapshot, .object(members.filter { !$0.0.isExactly("shard") && !$0.0.isExactly("export") }), shard,
                    root["source"]?["export"]?.stringValue
                ))
        }
        // One export's parts, by the identity its processes shared (`export --export-id`).
        guard let export = parts[0].export, parts.allSatisfy({ $0.export.map { $0.isExactly(export) } ?? false }) else {
            let named = parts.map { "\($0.snapshot.directory.relativePathForMessages) (\($0.export.map { "export '\($0)'" } ?? "no export id"))" }
            throw SnapshotError(
                "the folders are parts of different exports: \(named.joined(separator: ", ")); merge the shards of one export (\(Setting.exportShardsOfOneExport))"
            )
        }
        let count = parts[0].shard.count
        let indices = parts.map(\.shard.index).sorted()
        guard parts.allSatisfy({ $0.shard.count == count }), indices == Array(0..<count) else {
            throw SnapshotError(
                "the folders are shards \(parts.map { $0.shard.description }.joined(separator: ", ")); give each shard 0/\(count) to \(count - 1)/\(count) exactly once"
            )
        }
        let first = parts[0]
        for part in parts.dropFirst() {
            guard part.source == first.source else {
                throw SnapshotError(
                    "\(part.snapshot.directory.relativePathForMessages) was exported from another source than \(first.snapshot.directory.relativePathForMessages); merge the shards of one export"
                )
            }
            guard part.snapshot.containers.map({ "\($0.name) \($0.access)" }) == first.snapshot.containers.map({ "\($0.name) \($0.access)" }),
                part.snapshot.tables.map(\.name) == first.snapshot.tables.map(\.name)
            else {
                throw SnapshotError(
                    "\(part.snapshot.directory.relativePathForMessages) holds other containers or tables than \(first.snapshot.directory.relativePathForMessages); merge the shards of one export"
                )
            }
        }
        let builder = try SnapshotBuilder(destination: destination, force: force)
        do {
            for (i, container) in first.snapshot.containers.enumerated() {
                builder.addContainer(container.name, access: container.access, metadata: container.metadata)
                // Each part holds only its own shard's blobs and entities: a part that claims
                // another's shard (or two copies of one) is refused, not merged into duplicates.
                for part in parts {
                    if let stray = part.snapshot.containers[i].blobs.first(where: { !part.shard.owns(container: container.name, blob: $0.name) }) {
                        throw Self.notItsShard(part.snapshot, part.shard, "blob '\(container.name)/\(stray.name)'")
                    }
                }
                let blobs = parts.flatMap { $0.snapshot.containers[i].blobs }.sorted { $0.name.byteOrder($1.name) < 0 }
                for blob in blobs {
                    try builder.addBlob(blob)
                }
            }
            for (i, table) in first.snapshot.tables.enumerated() {
                let writer = try builder.openTable(table.name)
                var readers = try parts.map { try LinePuller(url: $0.snapshot.tables[i].file) }
                func pull(_ k: Int) throws -> (line: [UInt8], keys: (String, String))? {
                    guard let next = try head(&readers[k]) else { return nil }
                    guard parts[k].shard.owns(partitionKey: next.keys.0, rowKey: next.keys.1) else {
                        throw Self.notItsShard(
                            parts[k].snapshot, parts[k].shard,
                            "entity (PartitionKey '\(next.keys.0)', RowKey '\(next.keys.1)') of table '\(table.name)'")
                    }
                    return next
                }
                var heads: [(line: [UInt8], keys: (String, String))?] = try readers.indices.map { try pull($0) }
                while let next = heads.indices.filter({ heads[$0] != nil }).min(by: { isBefore(heads[$0]!.keys, heads[$1]!.keys) }) {
                    try writer.append(line: heads[next]!.line)
                    heads[next] = try pull(next)
                }
                try builder.close(writer)
            }
            return try builder.commit(source: first.source)
        } catch {
            builder.discard()
            throw error
        }
    }

    static func notItsShard(_ snapshot: Snapshot, _ shard: Shard, _ what: String) -> SnapshotError {
        SnapshotError(
            "\(snapshot.directory.relativePathForMessages) claims shard \(shard) but holds \(what), which belongs to another shard; it is not that shard's part"
        )
    }

    private static func head(_ reader: inout LinePuller) throws -> (line: [UInt8], keys: (String, String))? {
        guard let line = try reader.next() else { return nil }
        let entity = try SnapshotReader.decode(line, at: reader.path)
        return (line, (entity.partitionKey, entity.rowKey))
    }

    private static func isBefore(_ a: (String, String), _ b: (String, String)) -> Bool {
        let order = a.0.byteOrder(b.0)
        return order != 0 ? order < 0 : a.1.byteOrder(b.1) < 0
    }
}

/// A file's lines one at a time, read in 1 MiB chunks.
struct LinePuller {
    let path: String
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false

    init(url: URL) throws {
        path = url.relativePathForMessages
        handle = try FileHandle(forReadingFrom: url)
    }

    mutating func next() throws -> [UInt8]? {
        while true {
            if let end = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                defer { start = end + 1 }
                return Array(buffer[start..<end])
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return Array(buffer[start...])
            }
            buffer.removeFirst(start)
            start = 0
            if let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { buffer += chunk } else { atEnd = true }
        }
    }
}
