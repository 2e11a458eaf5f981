import AzureStorage
import Foundation
import SeedKit

/// Snapshots a container and a whole table of a target (design §7): every blob with its
/// content type and MD5, every entity of every partition with its exact EDM types, read page
/// by page and written line by line, so memory stays bounded whatever the table's size.
public struct Exporter: Sendable {
    public let blobs: BlobClient
    public let tables: TableClient
    public let target: PlanTarget

    public init(run: SeedRun) {
        blobs = run.blobs
        tables = run.tables
        target = run.target
    }

    /// Writes the snapshot to `destination`; `dataset` is recorded in the manifest when known.
    /// `onEntities` is called with the number of entities written so far.
    public func export(containers: [String], tables tableNames: [String], dataset: String?, to destination: URL, force: Bool,
                       onEntities: (@Sendable (Int) -> Void)? = nil) async throws -> SnapshotSummary {
        try await Reachability.check([blobs.account.blobEndpoint, tables.account.tableEndpoint])
        let builder = try SnapshotBuilder(destination: destination, force: force)
        do {
            for container in containers { try await export(container: container, into: builder) }
            var written = 0
            for table in tableNames {
                guard try await tables.tableExists(table) else {
                    throw RunError("table '\(table)' does not exist in \(target.displayName); pass the right --table")
                }
                let writer = try builder.openTable(table)
                for try await page in tables.query(table, fullMetadata: true) {
                    for decoded in page { try writer.append(decoded.entity) }
                    written += page.count
                    onEntities?(written)
                }
                try builder.close(writer)
            }
            var source: [(String, JSONValue)] = [("exporter", .string("azseed export"))]
            if let dataset { source.append(("dataset", .string(dataset))) }
            source += [("account", .string(target.account)), ("blobEndpoint", .string(target.blobEndpoint)),
                       ("tableEndpoint", .string(target.tableEndpoint))]
            return try builder.commit(source: .object(source))
        } catch {
            builder.discard()
            throw RunError.explaining(error, while: "exporting")
        }
    }

    private func export(container: String, into builder: SnapshotBuilder) async throws {
        guard let access = try await blobs.containerAccess(container) else {
            throw RunError("container '\(container)' does not exist in \(target.displayName); pass the right --container")
        }
        builder.addContainer(container, access: AccessLevel(access))
        for try await page in blobs.list(container: container) {
            for listed in page {
                let data = try await blobs.download(container: container, name: listed.name)
                let md5 = try builder.addBlob(listed.name, contentType: listed.contentType ?? "application/octet-stream", data: data)
                if let recorded = listed.contentMD5, recorded != md5 {
                    throw RunError("blob '\(container)/\(listed.name)': the downloaded bytes do not match its Content-MD5; export again")
                }
            }
        }
    }
}
