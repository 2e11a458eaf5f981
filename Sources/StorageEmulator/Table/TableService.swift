import Foundation
import StorageProtocol

/// The Table service (docs/PROTOCOL.md §4–6): tables, entities, queries with `$filter`,
/// `$select`, `$top` and continuation, and entity group transactions.
struct TableService: Sendable {
    let store: EmulatorStore
    let account: String
    /// Entities read from SQLite per query page at most, so one query cannot hold the store for long.
    var scanBudget = 50_000

    /// `keyRange` is a table SAS's: queries see only entities inside it, and other entity
    /// operations outside it are refused.
    func respond(_ request: TransportRequest, caller: Caller, keyRange: TableKeyRange? = nil) async throws -> TransportResponse {
        // The Table service has no anonymous access.
        guard caller == .account else { throw ServiceError.resourceNotFound }
        let query = QueryParameters(request.query)
        if request.path == "/\(account)" || request.path == "/\(account)/" {
            // The service itself: account information and stats; nothing else is served there.
            if let answer = ServiceLevel.respond(request, restype: query["restype"], comp: query["comp"]) { return answer }
            if let answer = try await ServiceProperties.respond(
                request, service: .table, restype: query["restype"], comp: query["comp"], store: store)
            {
                return answer
            }
            throw ServiceError.invalidQuery("comp", query["comp"] ?? "")
        }
        let resource = try TableResource.parse(request.path, account: account)
        try Self.checkTableName(of: resource, method: request.method)
        let context = Context(
            request: request, base: "http://\(request.headers["Host"] ?? "127.0.0.1")/\(account)",
            level: MetadataLevel(accept: request.headers["Accept"]), keyRange: keyRange)
        if let comp = query["comp"] {
            // Only Get/Set Table ACL take `comp`; any other is refused, never taken for a query.
            guard comp == "acl", case .entities(let table) = resource else { throw ServiceError.invalidQuery("comp", comp) }
            switch request.method {
            case "GET", "HEAD": return try await tableACL(table)
            case "PUT": return try await setTableACL(table, request)
            default: throw ServiceError.unsupportedVerb(request.method)
            }
        }
        switch (request.method, resource) {
        case ("POST", .tables): return try await createTable(context)
        case ("GET", .tables): return try await queryTables(context, query)
        case ("GET", .table(let name)): return try await getTable(context, name)
        case ("DELETE", .table(let name)): return try await deleteTable(name)
        case ("POST", .batch): return try await batch(context)
        case ("POST", .entities(let table)): return try await insert(context, table)
        case ("GET", .entities(let table)): return try await queryEntities(context, table, query)
        case ("GET", .entity(let table, let pk, let rk)): return try await getEntity(context, table, pk, rk, query)
        case ("PUT", .entity), ("MERGE", .entity), ("PATCH", .entity), ("DELETE", .entity):
            return try await writeEntity(context, resource)
        case (let method, .nested(let table, let rest)): return try await nested(method, table: table, rest: rest)
        default: throw ServiceError.unsupportedVerb(request.method)
        }
    }

    /// An entity or ACL operation on a name no table can have is Azure's 400 InvalidResourceName,
    /// not a missing table: the SDK tells the user what a table name must be from that answer.
    static let metricsTablesAreWrittenByAnalytics = ServiceError(
        403, .authorizationFailure, "This request is not authorized to perform this operation: the metrics tables are written by Storage Analytics.")

    /// The metrics tables (`$MetricsHourPrimaryTransactionsBlob`, …) are read, never written,
    /// by callers: Storage Analytics writes them.
    static func checkTableName(of resource: TableResource, method: String = "GET") throws {
        switch resource {
        case .entities(let table), .entity(let table, _, _), .nested(let table, _):
            if table.lowercased().hasPrefix("$metrics"), !MetricsKey.isMetricsTable(table) {
                throw ServiceError(
                    404, .tableNotFound,
                    "The table specified does not exist: the emulator keeps the transaction metrics ($MetricsHourPrimaryTransactionsBlob and its Minute and Table forms), not capacity metrics."
                )
            }
            if MetricsKey.isMetricsTable(table) {
                guard method == "GET" || method == "HEAD" else { throw metricsTablesAreWrittenByAnalytics }
                return
            }
            if let problem = StorageNames.tableProblem(table) {
                throw ServiceError(400, .invalidResourceName, "The specifed resource name contains invalid characters: \(problem).")
            }
        default: break
        }
    }

    struct Context {
        var request: TransportRequest
        var base: String
        var level: MetadataLevel
        var keyRange: TableKeyRange? = nil

        /// Refuses an entity operation outside the SAS's key range.
        func checkRange(_ operation: EntityOperation) throws(ServiceError) {
            try keyRange?.check(partitionKey: operation.partitionKey, rowKey: operation.rowKey)
        }

        var prefersNoContent: Bool { request.headers["Prefer"] == "return-no-content" }

        func json(_ status: Int, _ body: [UInt8], headers extra: [(String, String)] = []) -> TransportResponse {
            var headers = HeaderFields([("Content-Type", level.contentType), ("DataServiceVersion", "3.0;")])
            for (n, v) in extra { headers[n] = v }
            if request.headers["Prefer"] != nil { headers["Preference-Applied"] = "return-content" }
            return TransportResponse(status: status, headers: headers, body: Data(body))
        }

        func noContent(headers extra: [(String, String)] = []) -> TransportResponse {
            var headers = HeaderFields([("DataServiceVersion", "3.0;")])
            for (n, v) in extra { headers[n] = v }
            if prefersNoContent { headers["Preference-Applied"] = "return-no-content" }
            return TransportResponse(status: 204, headers: headers)
        }
    }

    /// Parses a JSON request body as an object node.
    static func jsonBody(_ data: Data) throws(ServiceError) -> JSONValue {
        let node: JSONValue
        do { node = try JSONParser.parse(data) } catch {
            throw ServiceError(400, .invalidInput, "The request body is not valid JSON: \(error).")
        }
        guard case .object = node else { throw ServiceError.invalidInput("The request body must be a JSON object.") }
        return node
    }

    // MARK: Tables

    /// Get Table ACL: the stored access policies, re-serialised (``AccessPolicyDocument``).
    func tableACL(_ table: String) async throws -> TransportResponse {
        let acl = try await store.tableACL(table)
        let body = AccessPolicyDocument(stored: acl).serialized(omittingEmptyPolicies: true)
        return TransportResponse(status: 200, headers: HeaderFields([("Content-Type", "application/xml")]), body: Data(body.utf8))
    }

    /// Set Table ACL: the body's signed identifiers, parsed and stored re-serialised (at most five, as on Azure).
    func setTableACL(_ table: String, _ request: TransportRequest) async throws -> TransportResponse {
        let document = try AccessPolicyDocument(body: request.body)
        try await store.setTableACL(table, acl: document.identifiers.isEmpty ? "" : document.serialized)
        return TransportResponse(status: 204)
    }

    func createTable(_ c: Context) async throws -> TransportResponse {
        let body = try Self.jsonBody(c.request.body)
        guard let name = body["TableName"]?.stringValue else {
            throw ServiceError(400, .propertiesNeedValue, "The values are not specified for all properties in the entity: TableName.")
        }
        if let problem = StorageNames.tableProblem(name) {
            throw ServiceError(400, .invalidResourceName, "The specifed resource name contains invalid characters: \(problem).")
        }
        try await store.createTable(name)
        let location = "\(c.base)/Tables('\(name)')"
        let headers = [("Location", location), ("DataServiceId", location)]
        if c.prefersNoContent { return c.noContent(headers: headers) }
        return c.json(201, tableJSON(c, name, element: true), headers: headers)
    }

    private func tableJSON(_ c: Context, _ name: String, element: Bool) -> [UInt8] {
        var out: [UInt8] = Array("{".utf8)
        if element && c.level != .none {
            out += Array("\"odata.metadata\":".utf8)
            JSONText.appendString("\(c.base)/$metadata#Tables/@Element", to: &out)
            out.append(UInt8(ascii: ","))
        }
        if c.level == .full {
            out += Array("\"odata.type\":".utf8)
            JSONText.appendString("\(account).Tables", to: &out)
            out += Array(",\"odata.id\":".utf8)
            JSONText.appendString("\(c.base)/Tables('\(name)')", to: &out)
            out += Array(",\"odata.editLink\":".utf8)
            JSONText.appendString("Tables('\(name)')", to: &out)
            out.append(UInt8(ascii: ","))
        }
        out += Array("\"TableName\":".utf8)
        JSONText.appendString(name, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    func getTable(_ c: Context, _ name: String) async throws -> TransportResponse {
        guard try await store.tableExists(name) else { throw EmulatorStore.tableNotFound }
        return c.json(200, tableJSON(c, name, element: true))
    }

    func deleteTable(_ name: String) async throws -> TransportResponse {
        if MetricsKey.isMetricsTable(name) { throw Self.metricsTablesAreWrittenByAnalytics }
        try await store.deleteTable(name)
        return TransportResponse(status: 204)
    }

    func queryTables(_ c: Context, _ query: QueryParameters) async throws -> TransportResponse {
        let filter = try Self.filter(query)
        let top = try Self.top(query)
        var after = try query["NextTableName"].map(Self.decodeToken)
        var names: [String] = []
        var next: String?
        scan: while true {
            let chunk = try await store.tables(after: after, limit: 1000)
            for name in chunk {
                if names.count == top {
                    next = name
                    break scan
                }
                let row = TableEntity(partitionKey: "", rowKey: "", properties: ["TableName": .string(name)])
                if filter?.matches(row) ?? true { names.append(name) }
            }
            guard chunk.count == 1000, let last = chunk.last else { break }
            after = last
        }
        let out = Self.collection(c, metadata: "Tables", count: names.count) { i, out in out += tableJSON(c, names[i], element: false) }
        // The token carries the last table returned; the next page starts strictly after it.
        let headers = next == nil ? [] : [("x-ms-continuation-NextTableName", Self.encodeToken(names.last ?? ""))]
        return c.json(200, out, headers: headers)
    }

    /// `{"odata.metadata":"…#<fragment>","value":[…]}` (no metadata member at `nometadata`).
    static func collection(_ c: Context, metadata fragment: String, count: Int, _ item: (Int, inout [UInt8]) throws -> Void) rethrows -> [UInt8] {
        var out: [UInt8] = Array("{".utf8)
        // Roughly an entity's size, so a page of 1,000 is not copied as it grows.
        out.reserveCapacity(256 + count * 512)
        if c.level != .none {
            out += Array("\"odata.metadata\":".utf8)
            JSONText.appendString("\(c.base)/$metadata#\(fragment)", to: &out)
            out.append(UInt8(ascii: ","))
        }
        out += Array("\"value\":[".utf8)
        for i in 0..<count {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            try item(i, &out)
        }
        out += Array("]}".utf8)
        return out
    }

    // MARK: Query options

    static func filter(_ query: QueryParameters) throws(ServiceError) -> FilterExpression? {
        guard let text = query["$filter"], !text.isEmpty else { return nil }
        let expression: FilterExpression
        do { expression = try FilterParser.parse(text) } catch { throw ServiceError.invalidInput("The $filter is not valid: \(error)") }
        guard expression.comparisonCount <= 15 else {
            throw ServiceError.invalidInput("The $filter has \(expression.comparisonCount) comparisons; at most 15 are allowed.")
        }
        return expression
    }

    /// `$top`: 1…1000 a page (default 1000).
    static func top(_ query: QueryParameters) throws(ServiceError) -> Int {
        guard let text = query["$top"] else { return 1000 }
        guard let n = Int(text), (1...1000).contains(n) else {
            throw ServiceError.invalidInput("The $top value '\(text)' is not an integer from 1 to 1000.")
        }
        return n
    }

    static func select(_ query: QueryParameters) -> [String]? {
        guard let text = query["$select"], !text.isEmpty, text != "*" else { return nil }
        return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Continuation tokens are opaque to clients; these carry a key as base64 of its UTF-8.
    static func encodeToken(_ key: String) -> String { "1!" + Data(key.utf8).base64EncodedString() }

    static func decodeToken(_ token: String) throws(ServiceError) -> String {
        guard token.hasPrefix("1!"), let data = Data(base64Encoded: String(token.dropFirst(2))) else {
            throw ServiceError.invalidInput("The continuation token '\(token)' is not valid.")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

extension TableService {
    /// A path below a table (`/t/Tables`, `/t/$batch`), as a client whose account URL ends with
    /// a table name sends it: answered as Azure answers it — a batch there is not a media type it
    /// takes (415); otherwise the table named first must exist (404 TableNotFound, which the SDKs
    /// turn into "check your account URL"), and the rest does not name an entity of it.
    func nested(_ method: String, table: String, rest: String) async throws -> TransportResponse {
        if rest == "$batch" || rest.hasPrefix("$batch") {
            throw ServiceError(415, .mediaTypeNotSupported, "None of the provided media types are supported.")
        }
        guard try await store.tableExists(table) else { throw EmulatorStore.tableNotFound }
        if method == "POST" {
            throw ServiceError(400, .propertiesNeedValue, "The values are not specified for all properties in the entity.")
        }
        throw ServiceError(400, .invalidInput, "The number of keys specified in the URI does not match number of key properties for the resource.")
    }
}
