import AzureStorage
import Foundation
import SeedKit

/// Snapshots a container and a whole table of a target (docs/FORMATS.md, snapshots): every blob with its
/// content type and MD5, every entity of every partition with its exact EDM types, read page
/// by page and written line by line, so memory stays bounded whatever the table's size.
/// Every file operation runs on `BlockingPool`'s threads, never on the cooperative pool.
public struct Exporter: Sendable {
    public let blobs: BlobClient
    public let tables: TableClient
    public let target: PlanTarget
    /// Only this shard's blobs and entities are written (a partial snapshot).
    public let shard: Shard?
    /// The identity the processes of one sharded export share (`--export-id`), recorded in
    /// each part so `snapshot merge` refuses parts of different exports.
    public var exportID: String?

    public init(run: SeedRun) {
        blobs = run.blobs
        tables = run.tables
        target = run.target
        shard = run.shard
    }

    /// Writes the snapshot to `destination`; `dataset` is recorded in the manifest when known.
    /// `onEntities` is called with the number of entities written so far.
    public func export(
        containers: [String], tables tableNames: [String], dataset: String?, to destination: URL, force: Bool,
        onEntities: (@Sendable (Int) -> Void)? = nil
    ) async throws -> SnapshotSummary {
        try await Reachability.check(
            [blobs.account.blobEndpoint, tables.account.tableEndpoint], trustedCertificates: blobs.configuration.trustedCertificates)
        let builder = try await BlockingPool.run { OnlyHere(try SnapshotBuilder(destination: destination, force: force)) }
        do {
            for container in containers { try await export(container: container, into: builder) }
            var written = 0
            for table in tableNames {
                guard try await tables.tableExists(table) else {
                    throw RunError("table '\(table)' does not exist in \(target.displayName); pass the right \(Setting.table)")
                }
                let writer = try await BlockingPool.run { OnlyHere(try builder.value.openTable(table)) }
                for try await page in tables.query(table, fullMetadata: true) {
                    let shard = self.shard
                    try await BlockingPool.run {
                        for decoded in page where shard?.owns(partitionKey: decoded.entity.partitionKey, rowKey: decoded.entity.rowKey) ?? true {
                            try writer.value.append(decoded.entity)
                        }
                    }
                    written += page.count
                    onEntities?(written)
                }
                try await BlockingPool.run { try builder.value.close(writer.value) }
            }
            var source: [(String, JSONValue)] = [("exporter", .string("azseed export"))]
            if let dataset { source.append(("dataset", .string(dataset))) }
            source += [
                ("account", .string(target.account)), ("blobEndpoint", .string(target.blobEndpoint)),
                ("tableEndpoint", .string(target.tableEndpoint)),
            ]
            // A partial snapshot says which part it is; 'azseed snapshot merge' joins the parts.
            if let shard {
                source.append(("shard", .string(shard.description)))
                if let exportID { source.append(("export", .string(exportID))) }
            }
            let manifestSource = JSONValue.object(source)
            return try await BlockingPool.run { try builder.value.commit(source: manifestSource) }
        } catch {
            _ = try? await BlockingPool.run { builder.value.discard() }
            throw RunError.explaining(error, while: "exporting")
        }
    }

    private func export(container: String, into builder: OnlyHere<SnapshotBuilder>) async throws {
        guard let access = try await blobs.containerProperties(container) else {
            let place = target.embeddedDataDirectory.map { "the embedded storage in \($0)" } ?? "\(target.account) (\(target.blobEndpoint))"
            throw RunError("container '\(container)' does not exist in \(place); pass the right \(Setting.container)")
        }
        builder.value.addContainer(container, access: access, metadata: try await blobs.containerMetadata(container) ?? [:])
        for try await page in blobs.list(container: container) {
            for listed in page where shard?.owns(container: container, blob: listed.name) ?? true {
                let data = try await blobs.download(container: container, name: listed.name)
                let contentType = listed.contentType ?? "application/octet-stream"
                let md5 = try await BlockingPool.run {
                    try builder.value.addBlob(listed.name, contentType: contentType, data: data, properties: listed)
                }
                if let recorded = listed.contentMD5, recorded != md5 {
                    throw RunError("blob '\(container)/\(listed.name)': the downloaded bytes do not match its Content-MD5; export again")
                }
            }
        }
    }
}

/// A snapshot builder or table writer handed between this exporter's task and the blocking
/// pool's threads: used by one of them at a time, one call after another, never shared — which
/// is what makes the unchecked sendability sound here (the types themselves are not Sendable).
struct OnlyHere<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
