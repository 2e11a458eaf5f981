import AzureStorage
import Foundation

/// What a written snapshot holds.
public struct SnapshotSummary: Sendable {
    public var directory: URL
    public var blobs: Int
    public var blobBytes: Int
    /// Entities written per table, in dataset order.
    public var entities: [(table: String, count: Int)]
}

/// Writes a desired state as a snapshot folder (design §7): `manifest.json`,
/// `tables/<table>.jsonl` and `blobs/<container>/<name>`. The bytes depend only on the
/// desired state, never on the time or machine of the run.
public enum SnapshotWriter {
    public static func write(_ state: DesiredState, to destination: URL, force: Bool) throws -> SnapshotSummary {
        let output = try OutputDirectory(destination, force: force)
        do {
            let summary = try write(state, into: output)
            try output.commit()
            return summary
        } catch {
            output.discard()
            throw error
        }
    }

    private static func write(_ state: DesiredState, into output: OutputDirectory) throws -> SnapshotSummary {
        var containers: [JSONValue] = []
        var blobCount = 0, blobBytes = 0
        for container in state.containers {
            var blobs: [JSONValue] = []
            for blob in container.blobs {
                guard let path = SnapshotFormat.blobFile(container: container.name, blob: blob.name) else {
                    throw GenerationError("blob '\(blob.name)' of container '\(container.name)' cannot be stored as a file; rename it")
                }
                try FileManager.default.copyItem(at: blob.file, to: try output.file(path))
                blobs.append(.object([("name", .string(blob.name)), ("contentType", .string(blob.contentType)),
                                      ("md5", .string(blob.md5Base64)), ("size", .int(Int64(blob.size)))]))
                blobCount += 1
                blobBytes += blob.size
            }
            containers.append(.object([("name", .string(container.name)), ("access", .string(container.access.rawValue)),
                                       ("blobs", .array(blobs))]))
        }
        var tables: [JSONValue] = []
        var counts: [(table: String, count: Int)] = []
        for table in state.tables {
            let relative = SnapshotFormat.tableFile(table.name)
            let writer = try BufferedFileWriter(url: try output.file(relative))
            var count = 0
            try table.forEachEntity { entity in
                try writer.write { out in
                    EntityJSONEncoder.append(partitionKey: entity.partitionKey, rowKey: entity.rowKey,
                                             names: entity.names, values: entity.values, to: &out)
                    out.append(UInt8(ascii: "\n"))
                }
                count += 1
            }
            let sha = try writer.finish()
            tables.append(.object([("name", .string(table.name)), ("file", .string(relative)), ("entities", .int(Int64(count))),
                                   ("sha256", .string(sha))]))
            counts.append((table.name, count))
        }
        let manifest = JSONValue.object([
            ("format", .string(SnapshotFormat.formatName)),
            ("version", .int(SnapshotFormat.version)),
            ("source", .object([
                ("generator", .string("azseed generate")),
                ("dataset", .string(state.dataset.name)),
                ("seed", .uint(state.seed)),
                ("window", .object([("from", .string(state.window.from.iso8601)), ("to", .string(state.window.to.iso8601))])),
                ("blobEndpoint", .string(state.blobEndpoint)),
            ])),
            ("containers", .array(containers)),
            ("tables", .array(tables)),
        ])
        try Data(manifest.pretty().utf8).write(to: try output.file(SnapshotFormat.manifestFile))
        return SnapshotSummary(directory: output.destination, blobs: blobCount, blobBytes: blobBytes, entities: counts)
    }
}
