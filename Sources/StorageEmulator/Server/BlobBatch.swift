import Foundation
import StorageProtocol

/// Blob Batch (`POST ?comp=batch` on the account or `?restype=container&comp=batch` on a
/// container): up to 256 Delete Blob or Set Blob Tier subrequests, all of one kind, each
/// signed on its own and answered on its own inside one 202 `multipart/mixed` reply.
extension StorageEmulatorCore {
    static let maxBatchSubrequests = 256

    /// Whether the request is a Blob Batch.
    static func isBlobBatch(_ request: TransportRequest) -> Bool {
        request.method == "POST" && request.query.contains { $0.name == "comp" && $0.value == "batch" }
    }

    func blobBatch(_ request: TransportRequest, caller: Caller) async throws -> TransportResponse {
        guard caller == .account else { throw ServiceError.resourceNotFound }
        guard let contentType = request.headers["Content-Type"], let boundary = MultipartBytes.boundary(in: contentType) else {
            throw ServiceError(400, .invalidHeaderValue, "A batch request must have Content-Type multipart/mixed with a boundary.")
        }
        // A container batch may only touch that container.
        let scope: String? =
            request.query.contains { $0.name == "restype" && $0.value == "container" }
            ? request.path.split(separator: "/").dropFirst().first.map(String.init) : nil
        let parts = MultipartBytes.parts(of: MultipartBytes.withoutCarriageReturns(request.body)[...], boundary: boundary)
        guard !parts.isEmpty else { throw ServiceError.invalidInput("The batch request holds no subrequests.") }
        guard parts.count <= Self.maxBatchSubrequests else {
            throw ServiceError(
                400, .exceedsMaxBatchRequestCount,
                "The batch operation exceeds the maximum number of allowed subrequests (\(Self.maxBatchSubrequests)).")
        }
        var subrequests: [(id: String, request: TransportRequest)] = []
        for part in parts {
            let message = MultipartBytes.httpMessage(in: part)
            let contentID = message.partHeaders["Content-ID"] ?? ""
            let fields = message.startLine?.split(separator: " ", maxSplits: 2).map(String.init) ?? []
            guard fields.count == 3, fields[2].hasPrefix("HTTP/") else { throw ServiceError.invalidInput("A batch subrequest has no request line.") }
            if message.malformedLine != nil { throw ServiceError.invalidInput("A batch subrequest has a malformed header line.") }
            var headers = message.headers
            if let host = request.headers["Host"] { headers["Host"] = host }
            let path = fields[1].hasSuffix("?") ? String(fields[1].dropLast()) : fields[1]
            guard let written = TransportRequest(method: fields[0], url: "http://\(request.headers["Host"] ?? "localhost")" + path, headers: headers)
            else {
                throw ServiceError.invalidInput("A batch subrequest has a malformed URL.")
            }
            // A batch sent to the account's host names its blobs as that host does (`/c/b`).
            let sub = VirtualHost.pathStyle(written, account: configuration.accountName, service: .blob)
            // Only Delete Blob and Set Blob Tier: a blob, never a container or the account.
            let segments = sub.path.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            guard segments.count == 3, !segments[2].isEmpty, !sub.query.contains(where: { $0.name == "restype" }) else {
                throw ServiceError(400, .invalidInput, "A batch subrequest must address a blob (Delete Blob or Set Blob Tier): \(fields[0]) \(path).")
            }
            subrequests.append((contentID, sub))
        }
        let kinds = Set(subrequests.map { sub in sub.request.method + (sub.request.query.first { $0.name == "comp" }?.value ?? "") })
        guard kinds.count == 1, let kind = kinds.first, kind == "DELETE" || kind == "PUTtier" else {
            throw ServiceError(400, .invalidInput, "All subrequests of a batch must be Delete Blob, or all Set Blob Tier.")
        }
        let responseBoundary = "batchresponse_" + UUID().uuidString.lowercased()
        var body = ""
        for (id, sub) in subrequests {
            let requestID = UUID().uuidString.lowercased()
            var answer: TransportResponse
            do {
                var subCaller = try await authenticate(sub, service: .blob)
                if case .sas(let grant) = subCaller {
                    try await authorize(grant, sub, service: .blob)
                    subCaller = .account
                }
                if let scope, sub.path.split(separator: "/").dropFirst().first.map(String.init) != scope {
                    throw ServiceError(400, .invalidInput, "A container batch may only address blobs of container '\(scope)'.")
                }
                answer = try await blob.respond(sub, caller: subCaller).response
                if sub.method == "DELETE" { answer.headers["x-ms-delete-type-permanent"] = "true" }
            } catch let error as ServiceError {
                answer = errorResponse(error, sub, .blob, requestID)
            } catch {
                // Earlier subrequests took effect: this one is answered on its own, as Azure does.
                answer = errorResponse(
                    ServiceError(500, .internalError, "The server encountered an internal error: \(error)."), sub, .blob, requestID)
            }
            answer.headers["x-ms-request-id"] = requestID
            answer.headers["x-ms-version"] = sub.headers["x-ms-version"] ?? request.headers["x-ms-version"] ?? "2025-11-05"
            if let client = sub.headers["x-ms-client-request-id"] { answer.headers["x-ms-client-request-id"] = client }
            if !answer.body.isEmpty { answer.headers["Content-Length"] = String(answer.body.count) }
            body += "--\(responseBoundary)\r\nContent-Type: application/http\r\nContent-ID: \(id)\r\n\r\n"
            body += "HTTP/1.1 \(answer.status) \(HTTPStatus.reason(answer.status))\r\n"
            for (name, value) in answer.headers.fields { body += "\(name): \(value)\r\n" }
            body += "\r\n" + String(decoding: answer.body, as: UTF8.self) + "\r\n"
        }
        body += "--\(responseBoundary)--\r\n"
        return TransportResponse(
            status: 202, headers: HeaderFields([("Content-Type", "multipart/mixed; boundary=\(responseBoundary)")]),
            body: Data(body.utf8))
    }
}
