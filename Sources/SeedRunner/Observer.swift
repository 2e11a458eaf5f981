import AzureStorage
import SeedKit

/// Reads what a target holds of a dataset's storage: each container's access level and
/// blobs (MD5 and content type from the listing), each table's existence and the entities
/// of the dataset's partitions, streamed page by page.
public struct Observer: Sendable {
    public let blobs: BlobClient
    public let tables: TableClient

    public init(blobs: BlobClient, tables: TableClient) {
        self.blobs = blobs
        self.tables = tables
    }

    /// Above this many owned partitions a table is read whole and filtered, rather than one
    /// query a partition.
    static let partitionQueryLimit = 16

    /// Observes every container and table `desired` names. `onEntities` is called with the
    /// number of entities read so far, after each page.
    public func observe(_ desired: DesiredStorage, onEntities: (@Sendable (Int) -> Void)? = nil) async throws -> ObservedState {
        var observed = ObservedState()
        try await Reachability.check([blobs.account.blobEndpoint, tables.account.tableEndpoint])
        do {
            for container in desired.containers {
                guard let access = try await blobs.containerAccess(container.name) else { continue }
                var found = ObservedContainer(access: AccessLevel(access))
                for try await page in blobs.list(container: container.name) {
                    for blob in page {
                        found.blobs[ExactString(blob.name)] = ObservedBlob(name: blob.name, size: blob.contentLength, md5: blob.contentMD5, contentType: blob.contentType)
                    }
                }
                observed.containers[container.name] = found
            }
            var read = 0
            for table in desired.tables {
                guard try await tables.tableExists(table.name) else { continue }
                var found = ObservedTable()
                let owned = Set(table.partitions.map { ExactString($0) })  // by bytes, as Azure keys partitions
                let filters: [TableFilter?] = owned.count > Self.partitionQueryLimit ? [nil] : table.partitions.map { .partition($0) }
                for filter in filters {
                    for try await page in tables.query(table.name, filter: filter) {
                        for decoded in page where owned.contains(ExactString(decoded.entity.partitionKey)) { found.add(decoded.entity) }
                        read += page.count
                        onEntities?(read)
                    }
                }
                observed.tables[table.name] = found
            }
        } catch {
            throw RunError.explaining(error, while: "reading the target")
        }
        return observed
    }
}
