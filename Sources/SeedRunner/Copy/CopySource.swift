import AzureStorage
import Foundation
import SeedKit

/// The source account of `azseed copy`: its containers and tables, read as the desired state
/// of the target. Blobs are listed, not read (their bytes go target-to-source, ``BlobCopier``);
/// entities are streamed page by page into the planner's merge, never held whole.
public struct CopySource: Sendable {
    public let blobs: BlobClient
    public let tables: TableClient
    /// How the source is shown in messages and plans (endpoints without credentials).
    public let displayName: String

    public init(account: StorageAccount, transport: (any HTTPTransport)? = nil, configuration: ClientConfiguration = ClientConfiguration()) {
        blobs = BlobClient(account: account, transport: transport, configuration: configuration)
        tables = TableClient(account: account, transport: transport, configuration: configuration)
        displayName = PlanTarget(account).displayName
    }

    /// The containers and tables to copy: the ones named, or — when neither list is given —
    /// every container and table of the source but the system containers (`$web`, `$root`:
    /// not copied, and listed in `skipped` so the caller can say so).
    public func selection(containers: [String], tables tableNames: [String]) async throws -> (
        containers: [String], tables: [String], skipped: [String]
    ) {
        // A name given twice is one container or table (table names are ASCII and, as in
        // Azure, the same table whatever their case).
        func distinct(_ names: [String]) -> [String] {
            var seen = Set<ExactString>()
            return names.filter { seen.insert(ExactString($0.lowercased())).inserted }
        }
        guard containers.isEmpty && tableNames.isEmpty else { return (distinct(containers), distinct(tableNames), []) }
        do {
            try await Reachability.check(
                [blobs.account.blobEndpoint, tables.account.tableEndpoint], trustedCertificates: blobs.configuration.trustedCertificates)
            let all = try await blobs.listContainers().filter { !ReservedNames.isLedgerContainer($0) }
            let (system, copied) = (all.filter { $0.hasPrefix("$") }, all.filter { !$0.hasPrefix("$") })
            // The source's ledger records the source's applies, not the target's.
            return (copied, try await tables.listTables().filter { !ReservedNames.isLedger($0) }, system)
        } catch let error as RunError {
            throw error
        } catch {
            throw RunError.explaining(error, while: "listing the source's containers and tables")
        }
    }

    /// An ETag as headers carry it: List Blobs gives it without its quotes (docs/PROTOCOL.md §7),
    /// and a condition (`x-ms-source-if-match`) compares the quoted form.
    static func withQuotedETag(_ listed: BlobProperties) -> BlobProperties {
        var listed = listed
        if let etag = listed.etag, !etag.hasPrefix("\""), !etag.hasPrefix("W/") { listed.etag = "\"" + etag + "\"" }
        return listed
    }

    /// The named containers and tables of the source as a desired state. A table owns every
    /// partition either side holds, so the target's entities the source lacks are leftovers
    /// (deleted with `--prune`). `target` is read only for its partitions.
    public func desiredStorage(containers names: [String], tables tableNames: [String], target: SeedRun) async throws -> DesiredStorage {
        try await Reachability.check(
            [blobs.account.blobEndpoint, tables.account.tableEndpoint], trustedCertificates: blobs.configuration.trustedCertificates)
        var containers: [DesiredContainer] = []
        do {
            for name in names {
                guard let access = try await blobs.containerProperties(name) else {
                    throw RunError("container '\(name)' does not exist in the source \(displayName); pass the right \(Setting.container)")
                }
                var blobs: [DesiredBlob] = []
                for try await page in self.blobs.list(container: name) {
                    for listed in page {
                        // Checked while planning, so such a blob stops the copy before anything is written.
                        if let problem = StorageNames.addressableBlobProblem(listed.name) {
                            throw RunError(
                                "blob '\(name)/\(listed.name)' of the source \(displayName) cannot be copied: \(problem); rename it in the source, or leave its container out"
                            )
                        }
                        let md5 = listed.contentMD5.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } ?? []
                        blobs.append(
                            DesiredBlob(
                                name: listed.name, content: .sourceBlob(container: name, name: listed.name, listed: Self.withQuotedETag(listed)),
                                size: listed.contentLength,
                                md5: md5.count == 16 ? md5 : [], contentType: listed.contentType ?? "application/octet-stream"))
                    }
                }
                blobs.sort { $0.name.byteOrder($1.name) < 0 }
                var container = DesiredContainer(name: name, access: access, blobs: blobs)
                container.metadata = try await self.blobs.containerMetadata(name) ?? [:]  // copied and compared like the blobs'
                containers.append(container)
            }
        } catch let error as RunError {
            throw error
        } catch {
            throw RunError.explaining(error, while: "reading the source")
        }
        var owned: [OwnedTable] = []
        var groups: [EntityGroup] = []
        for table in tableNames {
            let exists: Bool
            do { exists = try await tables.tableExists(table) } catch { throw RunError.explaining(error, while: "reading the source") }
            guard exists else { throw RunError("table '\(table)' does not exist in the source \(displayName); pass the right \(Setting.table)") }
            var partitions = try await Self.partitionKeys(of: table, in: tables, side: "the source")
            if try await Self.exists(table, in: target.tables) {
                partitions.formUnion(try await Self.partitionKeys(of: table, in: target.tables, side: "the target"))
            }
            let sorted = partitions.sorted().map(\.string)
            owned.append(OwnedTable(name: table, partitions: sorted))
            let client = tables
            let source = displayName
            groups.append(
                EntityGroup(
                    table: table, kind: nil, partitions: sorted, key: [], rowKeyReferences: [],
                    makeCursor: { SourceTableCursor(query: client.query(table, fullMetadata: true), table: table, source: source) },
                    rowKeys: { [:] }))
        }
        return DesiredStorage(containers: containers, tables: owned, groups: groups)
    }

    private static func exists(_ table: String, in client: TableClient) async throws -> Bool {
        do { return try await client.tableExists(table) } catch { throw RunError.explaining(error, while: "reading the target") }
    }

    /// Every PartitionKey of a table, by bytes, read with only the keys selected.
    private static func partitionKeys(of table: String, in client: TableClient, side: String) async throws -> Set<ExactString> {
        var keys: Set<ExactString> = []
        do {
            for try await page in client.query(table, select: ["PartitionKey", "RowKey"]) {
                for entity in page { keys.insert(ExactString(entity.entity.partitionKey)) }
            }
        } catch {
            throw RunError.explaining(error, while: "reading \(side)'s table '\(table)'")
        }
        return keys
    }
}

/// A source table's entities, page by page as the service lists them (PartitionKey, then
/// RowKey). The merge needs byte order; a service that lists some keys in another order
/// (UTF-16 code unit order differs for text above U+FFFF) is refused here rather than planned
/// wrongly.
struct SourceTableCursor: EntityCursor {
    private var pages: TableQuery.AsyncIterator
    private var page: [TableEntity] = []
    private var index = 0
    private var previous: (partitionKey: String, rowKey: String)?
    let table: String
    let source: String

    init(query: TableQuery, table: String, source: String) {
        pages = query.makeAsyncIterator()
        self.table = table
        self.source = source
    }

    mutating func next() async throws -> TableEntity? {
        while index == page.count {
            let next: [QueriedEntity]?
            do { next = try await pages.next() } catch { throw RunError.explaining(error, while: "reading the source's table '\(table)'") }
            guard let next else { return nil }
            page = next.map(\.entity)
            index = 0
        }
        let entity = page[index]
        index += 1
        if let previous {
            let p = previous.partitionKey.byteOrder(entity.partitionKey)
            if p > 0 || (p == 0 && previous.rowKey.byteOrder(entity.rowKey) >= 0) {
                throw RunError(
                    "the source \(source) listed table '\(table)' entity (\(entity.partitionKey), \(entity.rowKey)) after (\(previous.partitionKey), \(previous.rowKey)), out of byte order; copy this table with 'azseed export' and 'azseed import' instead"
                )
            }
        }
        previous = (entity.partitionKey, entity.rowKey)
        return entity
    }
}
