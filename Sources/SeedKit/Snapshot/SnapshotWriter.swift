import AzureStorage
import Foundation

/// What a written snapshot holds.
public struct SnapshotSummary: Sendable {
    public var directory: URL
    public var blobs: Int
    public var blobBytes: Int
    /// Entities written per table, in order.
    public var entities: [(table: String, count: Int)]
    /// How long writing took, when the caller measures it.
    public var seconds = 0.0
}

/// Writes a desired state as a snapshot folder (docs/FORMATS.md, snapshots): `manifest.json`,
/// `tables/<table>.jsonl` and `blobs/<container>/<name>`. The bytes depend only on the
/// desired state, never on the time or machine of the run.
public enum SnapshotWriter {
    public static func write(_ state: GeneratedDataset, to destination: URL, force: Bool) throws -> SnapshotSummary {
        let builder = try SnapshotBuilder(destination: destination, force: force)
        do {
            for container in state.containers {
                builder.addContainer(container.name, access: container.access, metadata: container.metadata)
                for blob in container.blobs {
                    try builder.addBlob(blob)
                }
            }
            for table in state.tables {
                let writer = try builder.openTable(table.name)
                try table.forEachEntity { entity in
                    try writer.append(partitionKey: entity.partitionKey, rowKey: entity.rowKey, names: entity.names, values: entity.values)
                }
                try builder.close(writer)
            }
            return try builder.commit(
                source: .object([
                    ("generator", .string("azseed generate")),
                    ("dataset", .string(state.dataset.name)),
                    ("seed", .uint(state.seed)),
                    ("window", .object([("from", .string(state.window.from.iso8601)), ("to", .string(state.window.to.iso8601))])),
                    ("blobEndpoint", .string(state.blobEndpoint)),
                ]))
        } catch {
            builder.discard()
            throw error
        }
    }
}
