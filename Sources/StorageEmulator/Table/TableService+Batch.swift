import Foundation
import StorageProtocol

extension TableService {
    /// Entity group transaction (docs/PROTOCOL.md §5): every operation or none. A failure still
    /// answers 202; the changeset then holds one part with the failing operation's status
    /// and an error whose message starts with its 0-based index.
    func batch(_ c: Context) async throws -> TransportResponse {
        guard let contentType = c.request.headers["Content-Type"], contentType.lowercased().hasPrefix("multipart/mixed") else {
            throw ServiceError.invalidInput("A $batch request must have Content-Type multipart/mixed with a boundary.")
        }
        let inner: [BatchInnerRequest]
        do { inner = try BatchRequestParser.parse(c.request.body, contentType: contentType) } catch {
            throw ServiceError.invalidInput("\(error)")
        }
        guard !inner.isEmpty else { throw ServiceError.invalidInput("The $batch request holds no operations.") }
        let requestID = c.request.headers["x-ms-client-request-id"] ?? UUID().uuidString.lowercased()
        if inner.count > 100 {
            return batchResponse(
                .failure(
                    index: 100,
                    ServiceError(
                        400, .invalidInput,
                        "The batch request operation exceeds the maximum 100 changes per change set.")), requestID: requestID)
        }
        var table: String?
        var operations: [EntityOperation] = []
        var wantsContent: [Bool] = []
        var seen = Set<ExactString>()  // RowKeys by bytes, as Azure tells them apart
        var hosts: [String: Bool] = [:]
        for (index, request) in inner.enumerated() {
            do {
                let resource = try TableResource.parse(Self.path(ofAbsolute: request.url, account: account, hosts: &hosts), account: account)
                if request.method == "GET" {
                    throw ServiceError(400, .invalidInput, "A query cannot be part of a change set.")
                }
                try TableService.checkTableName(of: resource, method: request.method)
                let (name, operation) = try Self.operation(
                    method: request.method, resource: resource, ifMatch: request.header("If-Match"), body: request.body)
                try c.checkRange(operation)
                if let table, table.lowercased() != name.lowercased() || !operation.partitionKey.isExactly(operations[0].partitionKey) {
                    throw ServiceError(400, .commandsInBatchActOnDifferentPartitions, "All commands in a batch must operate on same entity group.")
                }
                table = name
                guard seen.insert(ExactString(operation.rowKey)).inserted else {
                    throw ServiceError(
                        400, .invalidDuplicateRow,
                        "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request.")
                }
                operations.append(operation)
                wantsContent.append(request.header("Prefer") != "return-no-content")
            } catch let error as ServiceError {
                return batchResponse(.failure(index: index, error), requestID: requestID)
            }
        }
        do {
            let results = try await store.apply(operations, table: table!)
            let writer = EntityResponseWriter(level: .minimal, base: c.base, table: table!)
            return batchResponse(
                .success(
                    zip(operations, results).enumerated().map { i, pair in
                        let (operation, stored) = pair
                        var body: [UInt8]?
                        if case .insert = operation, wantsContent[i], let stored {
                            var out: [UInt8] = []
                            writer.append(stored, to: &out, element: true)
                            body = out
                        }
                        return (stored?.etag, body)
                    }), requestID: requestID)
        } catch let indexed as IndexedServiceError {
            return batchResponse(.failure(index: indexed.index, indexed.error), requestID: requestID)
        }
    }

    /// The path of an absolute URL (`http://host:port/account/…`), or the text itself when it is a path.
    /// The path of a changeset request's URL, path style: a URL naming the account in its host
    /// (`https://devstoreaccount1.table.core.windows.net/t(…)`, as clients write it for Azure)
    /// gets the account put in front, as ``VirtualHost`` does for a whole request. Only the
    /// primary host counts (a changeset writes; the secondary is read-only), only a host that is
    /// the URL's own (no user part), and only a scheme at the start — a `://` in the query is
    /// text, never a second URL.
    /// Read as bytes, and each host judged once per batch (`hosts`): String searches and the
    /// host's labels per operation were a fourteenth of the emulator's time in a seeding run.
    static func path(ofAbsolute url: String, account: String) -> String {
        var hosts: [String: Bool] = [:]
        return path(ofAbsolute: url, account: account, hosts: &hosts)
    }

    static func path(ofAbsolute url: String, account: String, hosts: inout [String: Bool]) -> String {
        let bytes = Array(url.utf8)
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        func upToQuery(from start: Int) -> String { text(start..<(bytes[start...].firstIndex(of: UInt8(ascii: "?")) ?? bytes.count)) }
        if bytes.first == UInt8(ascii: "/") { return upToQuery(from: 0) }
        let separator = Array("://".utf8)
        guard let scheme = MultipartBytes.find(separator, in: bytes[...], from: 0), scheme > 0,
            bytes[..<scheme].allSatisfy({ ($0 | 0x20) >= UInt8(ascii: "a") && ($0 | 0x20) <= UInt8(ascii: "z") })
        else { return url }
        let hostStart = scheme + separator.count
        let end =
            bytes[hostStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.count
        guard end < bytes.count, bytes[end] == UInt8(ascii: "/") else { return "/" }
        let host = text(hostStart..<end)
        let path = upToQuery(from: end)
        let named: Bool
        if let known = hosts[host] {
            named = known
        } else {
            named = !host.utf8.contains(UInt8(ascii: "@")) && VirtualHost.names(host, account: account, service: "table", secondary: false)
            hosts[host] = named
        }
        return named ? "/" + account + path : path
    }

    enum BatchOutcome {
        /// Per operation: the new ETag (nil for deletes) and the entity body when an insert asked for it.
        case success([(String?, [UInt8]?)])
        case failure(index: Int, ServiceError)
    }

    /// Written as bytes into one buffer: String concatenation per part was a twentieth of the
    /// emulator's time in a migration.
    func batchResponse(_ outcome: BatchOutcome, requestID: String) -> TransportResponse {
        let batchBoundary = "batchresponse_" + UUID().uuidString.lowercased()
        let changesetBoundary = "changesetresponse_" + UUID().uuidString.lowercased()
        var out: [UInt8] = []
        out.reserveCapacity(512 + 256 * (Self.partCount(outcome)))
        out += "--\(batchBoundary)\r\nContent-Type: multipart/mixed; boundary=\(changesetBoundary)\r\n\r\n".utf8
        let partStart = Array(
            "--\(changesetBoundary)\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 ".utf8)
        func part(status: Int, reason: String, contentID: Int, etag: String?, contentType: String?, body: [UInt8]) {
            out += partStart
            out += "\(status) \(reason)\r\nContent-ID: \(contentID)\r\n".utf8
            out += Self.partHeaders
            if let etag { out += "ETag: \(etag)\r\n".utf8 }
            if let contentType { out += "Content-Type: \(contentType)\r\n".utf8 }
            out += Self.crlf
            out += body
            out += Self.crlf
        }
        switch outcome {
        case .success(let results):
            for (i, (etag, body)) in results.enumerated() {
                if let body {
                    part(status: 201, reason: "Created", contentID: i + 1, etag: etag, contentType: MetadataLevel.minimal.contentType, body: body)
                } else {
                    part(status: 204, reason: "No Content", contentID: i + 1, etag: etag, contentType: nil, body: [])
                }
            }
        case .failure(let index, let error):
            let body = ErrorBodies.tableJSON(error, requestID: requestID, messagePrefix: "\(index):")
            part(
                status: error.status, reason: HTTPReason.phrase(error.status), contentID: index + 1, etag: nil,
                contentType: MetadataLevel.minimal.contentType, body: Array(body))
        }
        out += "--\(changesetBoundary)--\r\n--\(batchBoundary)--\r\n".utf8
        return TransportResponse(
            status: 202,
            headers: HeaderFields([
                ("Content-Type", "multipart/mixed; boundary=\(batchBoundary)"),
                ("DataServiceVersion", "3.0;"),
            ]), body: Data(out))
    }

    private static func partCount(_ outcome: BatchOutcome) -> Int {
        if case .success(let results) = outcome { results.count } else { 1 }
    }

    private static let partHeaders = Array("X-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n".utf8)
    private static let crlf = Array("\r\n".utf8)
}

/// Reason phrases for the status lines inside `$batch` responses.
enum HTTPReason {
    static func phrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 412: "Precondition Failed"
        case 413: "Request Entity Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}
