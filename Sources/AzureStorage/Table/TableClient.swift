import Foundation
import Synchronization

/// A client of one account's Table service.
public struct TableClient: Sendable {
    let pipeline: RequestPipeline
    public var account: StorageAccount { pipeline.account }
    /// The settings its requests follow.
    public var configuration: ClientConfiguration { pipeline.configuration }

    public init(account: StorageAccount, transport: (any HTTPTransport)? = nil, configuration: ClientConfiguration = ClientConfiguration()) {
        pipeline = RequestPipeline(
            account: account,
            transport: transport
                ?? CurlTransport(timeout: TimeInterval(configuration.timeout), trustedCertificates: configuration.trustedCertificates),
            configuration: configuration, service: .table)
    }

    /// Runs `decode` on a response body; what it cannot read becomes an ``AzureStorageError``
    /// of kind ``AzureStorageError/Kind/invalidResponse`` naming the operation.
    static func decoding<T>(_ operation: String, url: String, _ decode: () throws -> T) throws(AzureStorageError) -> T {
        do { return try decode() } catch {
            throw AzureStorageError(kind: .invalidResponse, operation: operation, url: url, message: "the answer could not be read: \(error)")
        }
    }

    static let jsonHeaders = HeaderFields([("Accept", "application/json;odata=minimalmetadata")])

    /// `(PartitionKey='…',RowKey='…')` with quotes doubled and values percent-encoded.
    public static func entityPath(_ partitionKey: String, _ rowKey: String) -> String {
        // Quotes doubled only where there are any: Foundation's replacingOccurrences was a
        // twentieth of a seeding run's client time.
        func key(_ s: String) -> String {
            PercentEncoding.component(s.utf8.contains(UInt8(ascii: "'")) ? s.replacingOccurrences(of: "'", with: "''") : s)
        }
        return "(PartitionKey='\(key(partitionKey))',RowKey='\(key(rowKey))')"
    }

    /// ``entityPath(_:_:)`` appended to `out` as bytes: what a batch writes per operation.
    static func appendEntityPath(_ partitionKey: String, _ rowKey: String, to out: inout [UInt8]) {
        func key(_ s: String) {
            // A quote is doubled, then both are percent-encoded: `%27%27`.
            for byte in s.utf8 {
                if byte == UInt8(ascii: "'") {
                    out += quoteTwice
                } else {
                    PercentEncoding.appendComponent(byte, to: &out)
                }
            }
        }
        out += partitionKeyOpen
        key(partitionKey)
        out += rowKeyOpen
        key(rowKey)
        out += keyClose
    }

    private static let partitionKeyOpen = Array("(PartitionKey='".utf8)
    private static let rowKeyOpen = Array("',RowKey='".utf8)
    private static let keyClose = Array("')".utf8)
    private static let quoteTwice = Array("%27%27".utf8)

    private func check(table: String, operation: String) throws {
        if let problem = StorageNames.tableProblem(table) {
            throw AzureStorageError(
                kind: .invalidRequest, operation: operation, url: pipeline.origin + pipeline.basePath + "/" + table,
                message: "table '\(table)': \(problem)")
        }
    }

    private func check(entity: TableEntity, table: String, operation: String) throws {
        if let problem = StorageNames.entityProblem(entity) {
            // The URL only for the error: building it for every entity was a fortieth of a migration.
            throw AzureStorageError(
                kind: .invalidRequest, operation: operation, url: pipeline.origin + pipeline.basePath + "/" + table,
                message: "entity (\(entity.partitionKey), \(entity.rowKey)) \(problem)")
        }
    }

    // MARK: Tables

    /// Creates a table; throws 409 TableAlreadyExists if it exists.
    public func createTable(_ name: String) async throws {
        try check(table: name, operation: "Create Table")
        var headers = Self.jsonHeaders
        headers["Content-Type"] = "application/json"
        headers["Prefer"] = "return-no-content"
        let body = Data(JSONValue.object([("TableName", .string(name))]).compact().utf8)
        _ = try await pipeline.send(
            pipeline.request("POST", "/Tables", headers: headers, body: body), operation: "Create Table", expected: [201, 204])
    }

    /// Creates the table unless it exists; returns whether it was created.
    @discardableResult
    public func ensureTable(_ name: String) async throws -> Bool {
        do {
            try await createTable(name)
            return true
        } catch let error as AzureStorageError where error.code == .tableAlreadyExists {
            return false
        }
    }

    /// Whether a table exists.
    public func tableExists(_ name: String) async throws -> Bool {
        try check(table: name, operation: "Query Tables")
        let response = try await pipeline.send(
            pipeline.request("GET", "/Tables", query: [("$filter", "TableName eq '\(name)'")], headers: Self.jsonHeaders),
            operation: "Query Tables", expected: [200])
        guard
            case .array(let items)? = try Self.decoding(
                "Query Tables", url: pipeline.origin + pipeline.basePath + "/Tables", { try JSONParser.parse(response.body) })["value"]
        else {
            return false
        }
        return items.contains { $0["TableName"]?.stringValue == name }
    }

    /// Every table name of the account.
    public func listTables() async throws -> [String] {
        var names: [String] = []
        var next: String?
        repeat {
            var query: [(String, String)] = []
            if let next { query.append(("NextTableName", next)) }
            let response = try await pipeline.send(
                pipeline.request("GET", "/Tables", query: query, headers: Self.jsonHeaders), operation: "Query Tables", expected: [200])
            if case .array(let items)? = try Self.decoding(
                "Query Tables", url: pipeline.origin + pipeline.basePath + "/Tables", { try JSONParser.parse(response.body) })["value"]
            {
                names += items.compactMap { $0["TableName"]?.stringValue }
            }
            next = response.headers["x-ms-continuation-NextTableName"]
        } while next != nil
        return names
    }

    /// Deletes a table (404 ResourceNotFound/TableNotFound when it does not exist).
    public func deleteTable(_ name: String) async throws {
        try check(table: name, operation: "Delete Table")
        _ = try await pipeline.send(
            pipeline.request("DELETE", "/Tables('\(name)')", headers: Self.jsonHeaders), operation: "Delete Table", expected: [204])
    }

    // MARK: Entities

    /// Inserts an entity; throws 409 EntityAlreadyExists if it exists. Returns its ETag.
    @discardableResult
    public func insert(_ entity: TableEntity, into table: String) async throws -> String? {
        try check(table: table, operation: "Insert Entity")
        try check(entity: entity, table: table, operation: "Insert Entity")
        var headers = Self.jsonHeaders
        headers["Content-Type"] = "application/json"
        headers["Prefer"] = "return-no-content"
        let response = try await pipeline.send(
            pipeline.request("POST", "/\(table)", headers: headers, body: Data(EntityJSONEncoder.encode(entity))),
            operation: "Insert Entity", expected: [201, 204])
        return response.headers["ETag"]
    }

    /// Inserts or replaces (`merge: false`) or inserts or merges (`merge: true`) an entity.
    @discardableResult
    public func upsert(_ entity: TableEntity, into table: String, merge: Bool = false) async throws -> String? {
        try await write(
            entity, table: table, method: merge ? "MERGE" : "PUT", etag: nil, operation: merge ? "Insert Or Merge Entity" : "Insert Or Replace Entity"
        )
    }

    /// Replaces (`merge: false`) or merges an existing entity if its ETag matches (`*`: any).
    @discardableResult
    public func update(_ entity: TableEntity, in table: String, etag: String = "*", merge: Bool = false) async throws -> String? {
        try await write(entity, table: table, method: merge ? "MERGE" : "PUT", etag: etag, operation: merge ? "Merge Entity" : "Update Entity")
    }

    private func write(_ entity: TableEntity, table: String, method: String, etag: String?, operation: String) async throws -> String? {
        try check(table: table, operation: operation)
        try check(entity: entity, table: table, operation: operation)
        var headers = Self.jsonHeaders
        headers["Content-Type"] = "application/json"
        if let etag { headers["If-Match"] = etag }
        let path = "/\(table)" + Self.entityPath(entity.partitionKey, entity.rowKey)
        let response = try await pipeline.send(
            pipeline.request(method, path, headers: headers, body: Data(EntityJSONEncoder.encode(entity))),
            operation: operation, expected: [204])
        return response.headers["ETag"]
    }

    /// Deletes an entity if its ETag matches (`*`: any).
    public func deleteEntity(partitionKey: String, rowKey: String, from table: String, etag: String = "*") async throws {
        try check(table: table, operation: "Delete Entity")
        var headers = Self.jsonHeaders
        headers["If-Match"] = etag
        _ = try await pipeline.send(
            pipeline.request("DELETE", "/\(table)" + Self.entityPath(partitionKey, rowKey), headers: headers),
            operation: "Delete Entity", expected: [204])
    }

    /// One entity, or nil when it does not exist.
    public func get(partitionKey: String, rowKey: String, from table: String, select: [String]? = nil) async throws -> QueriedEntity? {
        try check(table: table, operation: "Get Entity")
        var query: [(String, String)] = []
        if let select { query.append(("$select", select.joined(separator: ","))) }
        do {
            let response = try await pipeline.send(
                pipeline.request("GET", "/\(table)" + Self.entityPath(partitionKey, rowKey), query: query, headers: Self.jsonHeaders),
                operation: "Get Entity", expected: [200])
            var decoded = try Self.decoding(
                "Get Entity", url: pipeline.origin + pipeline.basePath + "/\(table)",
                { try EntityJSONReader.entity(response.body, nullIsAbsent: true) })
            decoded.etag = decoded.etag ?? response.headers["ETag"]
            return decoded
        } catch let error as AzureStorageError where error.status == 404 && (error.code == .resourceNotFound || error.code == .entityNotFound) {
            return nil
        }
    }

    /// Entities matching a filter, page by page (at most 1,000 a page, or `top`), following
    /// continuation tokens until the service has no more.
    /// `fullMetadata` asks the service to annotate every typed value (Edm.Double included),
    /// for readers that must keep types exactly (snapshots).
    public func query(_ table: String, filter: TableFilter? = nil, select: [String]? = nil, top: Int? = nil, fullMetadata: Bool = false) -> TableQuery
    {
        TableQuery(client: self, table: table, filter: filter, select: select, top: top, fullMetadata: fullMetadata)
    }

    /// How many entities `filter` selects in `table` (all of them without one), read page by
    /// page as keys only and counted without building an entity.
    /// The next page is asked for as soon as a page's continuation is known, while that page
    /// is counted: a count beside a busy run waits on the service, not on itself.
    public func count(_ table: String, filter: TableFilter? = nil) async throws -> Int {
        func fetch(after next: (String, String?)?) -> Task<RawPage, any Error> {
            Task { try await fetchPage(table, filter: filter, select: ["PartitionKey", "RowKey"], top: nil, next: next) }
        }
        var count = 0
        var pending: Task<RawPage, any Error>? = fetch(after: nil)
        while let task = pending {
            let page = try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
            pending = page.next.map { fetch(after: $0) }
            do {
                try Task.checkCancellation()
                count += try Self.decoding("Query Entities", url: pipeline.origin + pipeline.basePath + "/\(table)") {
                    try EntityJSONReader.pageCount(page.body)
                }
            } catch {
                pending?.cancel()
                throw error
            }
        }
        return count
    }

    /// One page of a query, not yet decoded: its body and the continuation, if any.
    struct RawPage: Sendable {
        var body: Data
        var next: (String, String?)?
    }

    func fetchPage(
        _ table: String, filter: TableFilter?, select: [String]?, top: Int?, fullMetadata: Bool = false,
        next: (String, String?)?
    ) async throws -> RawPage {
        try check(table: table, operation: "Query Entities")
        if let filter, filter.comparisonCount > 15 {
            throw AzureStorageError(
                kind: .invalidRequest, operation: "Query Entities", url: pipeline.origin + pipeline.basePath + "/" + table,
                message: "a filter may hold at most 15 comparisons, not \(filter.comparisonCount)")
        }
        var query: [(String, String)] = []
        if let filter { query.append(("$filter", filter.description)) }
        if let select { query.append(("$select", select.joined(separator: ","))) }
        if let top { query.append(("$top", String(top))) }
        if let (pk, rk) = next {
            query.append(("NextPartitionKey", pk))
            if let rk { query.append(("NextRowKey", rk)) }
        }
        let headers = fullMetadata ? HeaderFields([("Accept", "application/json;odata=fullmetadata")]) : Self.jsonHeaders
        let response = try await pipeline.send(
            pipeline.request("GET", "/\(table)()", query: query, headers: headers), operation: "Query Entities", expected: [200])
        let nextPK = response.headers["x-ms-continuation-NextPartitionKey"]
        return RawPage(body: response.body, next: nextPK.map { ($0, response.headers["x-ms-continuation-NextRowKey"]) })
    }

    // MARK: Entity group transactions

    /// Submits operations on one partition atomically; returns each operation's ETag.
    /// A refusal throws ``AzureStorageError`` with ``AzureStorageError/failedOperation`` naming
    /// the failing operation; nothing was applied.
    @discardableResult
    public func submit(_ operations: [TableBatchOperation], to table: String) async throws -> [String?] {
        try await submit(operations, to: table, entitiesChecked: false)
    }

    /// ``submit(_:to:)``, without checking each entity again when the caller already checked
    /// every one against Azure's rules (a plan's: the planner checks the whole desired state
    /// before the first write; checking again was a tenth of a seeding run's client time).
    package func submit(_ operations: [TableBatchOperation], to table: String, entitiesChecked: Bool) async throws -> [String?] {
        try check(table: table, operation: "Entity Group Transaction")
        if let problem = TableBatchCodec.problem(operations) {
            throw AzureStorageError(
                kind: .invalidRequest, operation: "Entity Group Transaction", url: pipeline.origin + pipeline.basePath + "/$batch", message: problem)
        }
        for op in operations where !entitiesChecked {
            switch op {
            case .insert(let e), .upsertReplace(let e), .upsertMerge(let e), .update(let e, _), .merge(let e, _):
                try check(entity: e, table: table, operation: "Entity Group Transaction")
            case .delete: break
            }
        }
        let tableURL = pipeline.origin + pipeline.basePath + "/" + table
        let (body, contentType) = TableBatchCodec.encode(operations, tableURL: tableURL)
        if body.count > TableBatchCodec.maxBodyBytes {
            throw AzureStorageError(
                kind: .invalidRequest, operation: "Entity Group Transaction", url: pipeline.origin + pipeline.basePath + "/$batch",
                message: "the batch is \(body.count) bytes; Azure allows 4 MiB — send fewer entities per batch")
        }
        var headers = Self.jsonHeaders
        headers["Content-Type"] = contentType
        let response = try await pipeline.send(
            pipeline.request("POST", "/$batch", headers: headers, body: body), operation: "Entity Group Transaction", expected: [202],
            partition: operations.first.map { "\(table)/\($0.partitionKey)" })
        let batchURL = pipeline.origin + pipeline.basePath + "/$batch"
        let parts = try TableBatchCodec.decodeResponse(response.body, contentType: response.headers["Content-Type"], url: batchURL)
        if let failed = parts.first(where: { $0.status >= 400 }) {
            throw TableBatchCodec.failure(failed, operations: operations, url: batchURL)
        }
        guard parts.count == operations.count else {
            throw AzureStorageError(
                kind: .invalidResponse, operation: "Entity Group Transaction", url: pipeline.origin + pipeline.basePath + "/$batch",
                message: "expected \(operations.count) responses, got \(parts.count)")
        }
        return parts.map { $0.headers["ETag"] }
    }
}

/// The pages of a table query, as an async sequence.
public struct TableQuery: AsyncSequence, Sendable {
    public typealias Element = [QueriedEntity]
    let client: TableClient
    let table: String
    let filter: TableFilter?
    let select: [String]?
    let top: Int?
    let fullMetadata: Bool

    /// Reads ahead: while page n is used, page n + 1 is decoded and page n + 2 fetched, so the
    /// service, the decoding and the caller's work on a page run at the same time. At most those
    /// three pages are held.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let query: TableQuery
        var pending: Ahead?
        var started = false

        /// The reads ahead; when a caller stops early and drops the iterator, they are cancelled
        /// with it, and no page after them is asked for.
        final class Ahead: Sendable {
            let task: Task<DecodedPage, any Error>
            /// Set once the caller has the page: its next fetch is then the next Ahead's.
            let taken = Atomic(false)
            init(_ task: Task<DecodedPage, any Error>) { self.task = task }
            deinit {
                guard !taken.load(ordering: .acquiring) else { return }
                let task = self.task
                task.cancel()
                Task { (try? await task.value)?.next?.cancel() }
            }
        }

        /// A page's entities, and the fetch of the page after it (started before they were decoded).
        struct DecodedPage: Sendable {
            var entities: [QueriedEntity]
            var next: Task<TableClient.RawPage, any Error>?
        }

        static func fetch(_ query: TableQuery, after next: (String, String?)?) -> Task<TableClient.RawPage, any Error> {
            Task {
                try await query.client.fetchPage(
                    query.table, filter: query.filter, select: query.select, top: query.top,
                    fullMetadata: query.fullMetadata, next: next)
            }
        }

        static func decode(_ query: TableQuery, _ raw: Task<TableClient.RawPage, any Error>) -> Task<DecodedPage, any Error> {
            Task {
                let page = try await withTaskCancellationHandler {
                    try await raw.value
                } onCancel: {
                    raw.cancel()
                }
                let next = Task.isCancelled ? nil : page.next.map { fetch(query, after: $0) }
                do {
                    let entities = try TableClient.decoding(
                        "Query Entities", url: query.client.pipeline.origin + query.client.pipeline.basePath + "/\(query.table)",
                        { try EntityJSONReader.page(page.body) })
                    return DecodedPage(entities: entities, next: next)
                } catch {
                    next?.cancel()
                    throw error
                }
            }
        }

        public mutating func next() async throws -> [QueriedEntity]? {
            if !started {
                started = true
                pending = Ahead(Self.decode(query, Self.fetch(query, after: nil)))
            }
            while let ahead = pending {
                let task = ahead.task
                let page: DecodedPage
                do {
                    page = try await withTaskCancellationHandler {
                        try await task.value
                    } onCancel: {
                        task.cancel()
                    }
                } catch {
                    pending = nil
                    throw error
                }
                ahead.taken.store(true, ordering: .releasing)
                pending = page.next.map { Ahead(Self.decode(query, $0)) }
                // The service may answer an empty page with a continuation: keep going.
                if !page.entities.isEmpty { return page.entities }
            }
            return nil
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(query: self) }
}
