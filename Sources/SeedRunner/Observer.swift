import AzureStorage
import SeedKit
import Synchronization

/// Reads what a target holds of a dataset's storage: each container's access level and
/// blobs (MD5 and content type from the listing), each table's existence and — for a plan,
/// page by page as the merge asks (``entities(onRead:)``); for a reset, whole — the
/// entities of the dataset's partitions.
public struct Observer: Sendable {
    public let blobs: BlobClient
    public let tables: TableClient
    /// Only this shard's blobs and entities are seen (`--shard`).
    public let shard: Shard?

    public init(blobs: BlobClient, tables: TableClient, shard: Shard? = nil) {
        self.blobs = blobs
        self.tables = tables
        self.shard = shard.flatMap { $0.count > 1 ? $0 : nil }
    }

    /// Above this many owned partitions a table is read whole and filtered, rather than one
    /// query a partition.
    static let partitionQueryLimit = 16

    /// The containers with their blobs and the tables that exist (empty: their entities are
    /// read by ``entities(onRead:)``).
    public func observeStorage(_ desired: DesiredStorage) async throws -> ObservedState {
        var observed = ObservedState()
        try await Reachability.check(
            [blobs.account.blobEndpoint, tables.account.tableEndpoint], trustedCertificates: blobs.configuration.trustedCertificates)
        do {
            for container in desired.containers {
                // Get Container Properties: a SAS may read it, not the ACL.
                guard let access = try await blobs.containerProperties(container.name) else { continue }
                var found = ObservedContainer(access: access)
                if container.metadata != nil { found.metadata = try await blobs.containerMetadata(container.name) }
                for try await page in blobs.list(container: container.name) {
                    for blob in page where shard?.owns(container: container.name, blob: blob.name) ?? true {
                        found.blobs[ExactString(blob.name)] = ObservedBlob(
                            name: blob.name, size: blob.contentLength, md5: blob.contentMD5, contentType: blob.contentType,
                            listed: blob)
                    }
                }
                observed.containers[container.name] = found
            }
            for table in desired.tables where try await tables.tableExists(table.name) {
                observed.tables[table.name] = ObservedTable()
            }
        } catch {
            throw RunError.explaining(error, while: "reading the target")
        }
        return observed
    }

    /// Everything ``observeStorage(_:)`` reads and every entity of the owned partitions,
    /// held in memory. `onEntities` is called with the number of entities read so far.
    public func observe(_ desired: DesiredStorage, onEntities: (@Sendable (Int) -> Void)? = nil) async throws -> ObservedState {
        var observed = try await observeStorage(desired)
        let source = entities(onRead: onEntities)
        do {
            for table in desired.tables where observed.tables[table.name] != nil {
                var pages = source.pages(table: table.name, partitions: table.partitions.sorted { $0.byteOrder($1) < 0 })
                let owned = Set(table.partitions.map { ExactString($0) })  // by bytes, as Azure keys partitions
                while let page = try await pages.next() {
                    for entity in page where owned.contains(ExactString(entity.partitionKey)) { observed.tables[table.name]!.add(entity) }
                }
            }
        } catch {
            throw RunError.explaining(error, while: "reading the target")
        }
        return observed
    }

    /// The target's entities as the planner's source. `onRead` is called with the number
    /// of entities read so far, after each page.
    public func entities(onRead: (@Sendable (Int) -> Void)? = nil) -> some ObservedEntitySource {
        TableEntitySource(tables: tables, onRead: onRead, shard: shard)
    }
}

/// Entities read from the Table service: one query a partition, in the order asked, or the
/// whole table when it owns more than ``Observer/partitionQueryLimit`` partitions. One page
/// is fetched ahead (``TableQuery``), so memory holds two pages.
struct TableEntitySource: ObservedEntitySource {
    let tables: TableClient
    let onRead: (@Sendable (Int) -> Void)?
    let shard: Shard?
    private let counter = Counter()

    init(tables: TableClient, onRead: (@Sendable (Int) -> Void)?, shard: Shard? = nil) {
        self.tables = tables
        self.onRead = onRead
        self.shard = shard
    }

    func pages(table: String, partitions: [String]) -> any ObservedEntityPages {
        let filters: [TableFilter?] = partitions.count > Observer.partitionQueryLimit ? [nil] : partitions.map { .partition($0) }
        return Pages(queries: filters.map { tables.query(table, filter: $0) }, counter: counter, onRead: onRead, shard: shard)
    }

    struct Pages: ObservedEntityPages {
        var queries: [TableQuery]
        var current: TableQuery.AsyncIterator?
        let counter: Counter
        let onRead: (@Sendable (Int) -> Void)?
        let shard: Shard?

        init(queries: [TableQuery], counter: Counter, onRead: (@Sendable (Int) -> Void)?, shard: Shard?) {
            self.queries = queries.reversed()
            self.counter = counter
            self.onRead = onRead
            self.shard = shard
        }

        mutating func next() async throws -> [TableEntity]? {
            do {
                while true {
                    if current == nil {
                        guard let query = queries.popLast() else { return nil }
                        current = query.makeAsyncIterator()
                    }
                    if let page = try await current!.next() {
                        onRead?(counter.add(page.count))
                        // Each with the ETag read: apply's writes of it are conditional on it.
                        let read = page.lazy.map { queried in
                            var entity = queried.entity
                            entity.etag = queried.etag
                            return entity
                        }
                        guard let shard else { return Array(read) }
                        // Other shards' entities are theirs to compare: this shard never sees them.
                        let mine = read.filter { shard.owns(partitionKey: $0.partitionKey, rowKey: $0.rowKey) }
                        if !mine.isEmpty { return Array(mine) }
                        continue
                    }
                    current = nil
                }
            } catch {
                throw RunError.explaining(error, while: "reading the target")
            }
        }
    }

    /// Entities read across every pass of one plan, for the progress count.
    final class Counter: Sendable {
        private let total = Mutex(0)
        func add(_ n: Int) -> Int {
            total.withLock {
                $0 += n
                return $0
            }
        }
    }
}
