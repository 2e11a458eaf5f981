import Foundation
import StorageProtocol

extension TableService {
    /// Reads an entity body straight from its bytes (no JSON tree); keys in the URL
    /// (PUT/MERGE/PATCH) take the place of keys in the body.
    static func entity(from body: some Collection<UInt8>, partitionKey: String? = nil, rowKey: String? = nil) throws(ServiceError) -> TableEntity {
        let keys = partitionKey.flatMap { pk in rowKey.map { (partitionKey: pk, rowKey: $0) } }
        // Not an object at all (empty, an array, a bare value): the body is refused as such,
        // before any entity rule.
        guard let first = body.first(where: { !JSONParser.isSpace($0) }), first == UInt8(ascii: "{") else {
            if body.allSatisfy(JSONParser.isSpace) { throw ServiceError(400, .invalidInput, "The request body is not valid JSON: it is empty.") }
            throw ServiceError.invalidInput("The request body must be a JSON object.")
        }
        let entity: TableEntity
        do {
            entity = try EntityJSONReader.entity(body, keys: keys).entity
        } catch let error as JSONParseError {
            throw ServiceError(400, .invalidInput, "The request body is not valid JSON: \(error).")
        } catch let error as EntityDecodingError where error.tooManyProperties {
            throw EntityRules.tooManyProperties
        } catch let error as EntityDecodingError where error.duplicate == .key {
            throw ServiceError(400, .duplicateKeyPropertySpecified, "A key property is specified more than one time.")
        } catch let error as EntityDecodingError where error.duplicate == .property {
            throw ServiceError(400, .duplicatePropertiesSpecified, "A property is specified more than one time.")
        } catch let error as EntityDecodingError where error.missingKey {
            throw ServiceError(
                400, .propertiesNeedValue, "The values are not specified for all properties in the entity: PartitionKey and RowKey are required.")
        } catch {
            throw ServiceError(400, .invalidInput, "An entity property is not valid: \(error).")
        }
        try EntityRules.check(entity)
        return entity
    }

    /// The operation a request (outer or inside a `$batch`) asks for.
    /// `ifMatch`: the request's If-Match header, the only one an entity write reads.
    static func operation(method: String, resource: TableResource, ifMatch: @autoclosure () -> String?, body: some Collection<UInt8>)
        throws(ServiceError) -> (
            table: String, EntityOperation
        )
    {
        switch (method, resource) {
        case ("POST", .entities(let table)):
            return (table, .insert(try entity(from: body)))
        case ("PUT", .entity(let table, let pk, let rk)):
            return (table, .replace(try entity(from: body, partitionKey: pk, rowKey: rk), ifMatch: ifMatch()))
        case ("MERGE", .entity(let table, let pk, let rk)), ("PATCH", .entity(let table, let pk, let rk)):
            return (table, .merge(try entity(from: body, partitionKey: pk, rowKey: rk), ifMatch: ifMatch()))
        case ("DELETE", .entity(let table, let pk, let rk)):
            guard let ifMatch = ifMatch() else {
                throw ServiceError(400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: If-Match.")
            }
            return (table, .delete(partitionKey: pk, rowKey: rk, ifMatch: ifMatch))
        default:
            throw ServiceError.unsupportedVerb(method)
        }
    }

    func insert(_ c: Context, _ table: String) async throws -> TransportResponse {
        let (_, operation) = try Self.operation(
            method: "POST", resource: .entities(table), ifMatch: c.request.headers["If-Match"], body: c.request.body)
        try c.checkRange(operation)
        let stored = try await applyOne(operation, table: table)!
        let location =
            "\(c.base)/\(table)(PartitionKey='\(EntityResponseWriter.keyText(stored.entity.partitionKey))',RowKey='\(EntityResponseWriter.keyText(stored.entity.rowKey))')"
        let headers = [("ETag", stored.etag), ("Location", location), ("DataServiceId", location)]
        if c.prefersNoContent { return c.noContent(headers: headers) }
        var out: [UInt8] = []
        EntityResponseWriter(level: c.level, base: c.base, table: table).append(stored, to: &out, element: true)
        return c.json(201, out, headers: headers)
    }

    func writeEntity(_ c: Context, _ resource: TableResource) async throws -> TransportResponse {
        let (table, operation) = try Self.operation(
            method: c.request.method, resource: resource, ifMatch: c.request.headers["If-Match"], body: c.request.body)
        try c.checkRange(operation)
        let stored = try await applyOne(operation, table: table)
        return c.noContent(headers: stored.map { [("ETag", $0.etag)] } ?? [])
    }

    private func applyOne(_ operation: EntityOperation, table: String) async throws -> StoredEntity? {
        do {
            return try await store.apply([operation], table: table)[0]
        } catch let indexed as IndexedServiceError {
            throw indexed.error
        }
    }

    func getEntity(_ c: Context, _ table: String, _ pk: String, _ rk: String, _ query: QueryParameters) async throws -> TransportResponse {
        try c.keyRange?.check(partitionKey: pk, rowKey: rk)
        let stored = try await store.entity(table: table, partitionKey: pk, rowKey: rk)
        var out: [UInt8] = []
        EntityResponseWriter(level: c.level, base: c.base, table: table, select: Self.select(query)).append(stored, to: &out, element: true)
        return c.json(200, out, headers: [("ETag", stored.etag)])
    }

    /// A page of a query: at most `$top` matches in key order, and a continuation when the
    /// scan stopped before the end (the next page may then be empty, as Azure's may).
    func queryEntities(_ c: Context, _ table: String, _ query: QueryParameters) async throws -> TransportResponse {
        let filter = try Self.filter(query)
        let top = try Self.top(query)
        let partition = filter?.requiredPartitionKey
        var after: (String, String)?
        if let npk = query["NextPartitionKey"] {
            after = (try Self.decodeToken(npk), try Self.decodeToken(query["NextRowKey"] ?? "1!"))
        }
        // A table SAS's key range bounds the scan itself: it starts at the range's start and
        // stops at its end, so neither the rows read nor a continuation ever name a key outside
        // it (a continuation below the range is moved up to its start).
        var from: (pk: String, rk: String?)?
        if let range = c.keyRange {
            if let partition, !range.mayContain(partitionKey: partition) { return try Self.emptyPage(c, table, query) }
            if let start = range.start, after.map({ range.precedesStart($0) }) ?? true {
                after = nil
                from = start
            }
        }
        // A filter that names only keys and Timestamp is read from the row's columns; one that
        // names a property decodes the row (kept for the page, which then need not again).
        let decodes = !(filter?.namesOnlyKeys ?? true)
        // Keys selected, keys filtered: the page needs no row's properties (a count).
        let keysOnly = !decodes && (Self.select(query)?.allSatisfy(JSONParser.isKeyOrTimestamp) ?? false)
        var matches: [QueryMatch] = []
        var scanned = 0
        var more = false
        scan: while true {
            let chunk = try await store.scanEntities(
                table: table, partition: partition, after: after, from: after == nil ? from : nil, limit: 1000, keysOnly: keysOnly)
            for (index, row) in chunk.enumerated() {
                if let range = c.keyRange, range.isPastEnd(partitionKey: row.partitionKey, rowKey: row.rowKey) {
                    more = false
                    break scan
                }
                scanned += 1
                if c.keyRange?.contains(partitionKey: row.partitionKey, rowKey: row.rowKey) ?? true {
                    if let filter {
                        let decoded = decodes ? try row.decoded() : nil
                        if filter.matches(decoded?.entity ?? row.keysOnly, timestamp: row.timestamp) {
                            matches.append(QueryMatch(row: row, decoded: decoded))
                        }
                    } else {
                        matches.append(QueryMatch(row: row, decoded: nil))
                    }
                }
                after = (row.partitionKey, row.rowKey)
                if matches.count == top || scanned >= scanBudget {
                    // Only at the end of a chunk does it take a read to know whether rows follow.
                    if index < chunk.count - 1 {
                        more = true
                    } else if chunk.count == 1000 {
                        more = try await !store.scanEntities(table: table, partition: partition, after: after, limit: 1).isEmpty
                    }
                    break scan
                }
            }
            if chunk.count < 1000 { break }
        }
        return try Self.page(c, table, query, matches, next: more ? after : nil)
    }

    static func emptyPage(_ c: Context, _ table: String, _ query: QueryParameters) throws -> TransportResponse {
        try page(c, table, query, [], next: nil)
    }

    /// The JSON page of `matches`, with a continuation naming `next` when given.
    static func page(_ c: Context, _ table: String, _ query: QueryParameters, _ matches: [QueryMatch], next after: (String, String)?)
        throws -> TransportResponse
    {
        let writer = EntityResponseWriter(level: c.level, base: c.base, table: table, select: Self.select(query))
        let out = try Self.collection(c, metadata: table, count: matches.count) { i, out in
            try writer.append(matches[i].row, decoded: matches[i].decoded, to: &out)
        }
        var headers: [(String, String)] = []
        if let after {
            headers = [
                ("x-ms-continuation-NextPartitionKey", Self.encodeToken(after.0)),
                ("x-ms-continuation-NextRowKey", Self.encodeToken(after.1)),
            ]
        }
        return c.json(200, out, headers: headers)
    }
}

/// A row a query returns, with its properties when the filter decoded them.
struct QueryMatch {
    var row: StoredRow
    var decoded: StoredEntity?
}

extension FilterExpression {
    /// The PartitionKey every match must have, when the filter says `PartitionKey eq '…'`
    /// at the top level (alone or and-ed): the query then reads only that partition.
    var requiredPartitionKey: String? {
        switch self {
        case .comparison(.property(let name), .eq, .literal(.string(let pk))) where name.isExactly("PartitionKey"): return pk
        case .comparison(.literal(.string(let pk)), .eq, .property(let name)) where name.isExactly("PartitionKey"): return pk
        case .and(let a, let b): return a.requiredPartitionKey ?? b.requiredPartitionKey
        default: return nil
        }
    }
}
