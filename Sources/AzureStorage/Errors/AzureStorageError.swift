import Foundation

/// Every failure of a storage call: a service error (status and `x-ms-error-code`), a
/// transport failure, or a request refused before it was sent.
public struct AzureStorageError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The service answered with an error status.
        case service
        /// The request could not be sent or no answer came (connection refused, timeout…).
        case transport
        /// The request was invalid and was never sent (a name, key or size rule).
        case invalidRequest
        /// The answer could not be understood.
        case invalidResponse
    }

    public var kind: Kind
    /// The operation, e.g. "Put Blob".
    public var operation: String
    /// The URL without its query string, so a SAS signature can never appear.
    public var url: String
    public var status: Int?
    /// The service's error code (`x-ms-error-code`), e.g. `EntityAlreadyExists`.
    public var code: String?
    public var message: String
    public var requestID: String?

    public init(kind: Kind, operation: String, url: String, status: Int? = nil, code: String? = nil, message: String, requestID: String? = nil) {
        self.kind = kind
        self.operation = operation
        self.url = url
        self.status = status
        self.code = code
        self.message = message
        self.requestID = requestID
    }

    public var description: String {
        var s = "\(operation) \(url) failed: "
        if let status { s += "\(status) " }
        if let code { s += "\(code): " }
        s += message.split(whereSeparator: \.isNewline).first.map(String.init) ?? message
        if let requestID { s += " (request id \(requestID))" }
        return s
    }

    /// Whether a retry may succeed: 408, 429, 500, 502, 503, 504 and transport failures.
    ///
    /// A retried write that the server had already applied (a 500 OperationTimedOut after
    /// commit) answers as if the first attempt won: an Insert then gets 409
    /// EntityAlreadyExists, a Put Blob with `If-None-Match: *` 409 BlobAlreadyExists, a
    /// Delete 404. Callers reconcile those instead of reporting them.
    public var isTransient: Bool {
        switch kind {
        case .transport: return true
        case .service: return [408, 429, 500, 502, 503, 504].contains(status ?? 0)
        default: return false
        }
    }
}

extension AzureStorageError {
    /// Reads a service error from a response: the code from `x-ms-error-code` or the body
    /// (Blob XML `<Error><Code>`, Table JSON `odata.error`), the message from the body.
    static func from(_ response: TransportResponse, operation: String, url: String) -> AzureStorageError {
        var code = response.headers["x-ms-error-code"]
        var message = HTTPStatus.reason(response.status)
        if let json = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
           let error = (json["odata.error"] ?? json["error"]) as? [String: Any] {
            code = code ?? error["code"] as? String
            if let m = error["message"] as? [String: Any], let value = m["value"] as? String { message = value }
            else if let m = error["message"] as? String { message = m }
        } else if let text = String(data: response.body, encoding: .utf8), text.contains("<Error>") {
            code = code ?? XMLText.element("Code", in: text)
            message = XMLText.element("Message", in: text) ?? message
        }
        return AzureStorageError(kind: .service, operation: operation, url: url, status: response.status, code: code,
                                 message: message, requestID: response.headers["x-ms-request-id"])
    }
}

/// Reason phrases for messages.
package enum HTTPStatus {
    package static func reason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 412: "Precondition Failed"
        case 413: "Request Entity Too Large"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "HTTP \(status)"
        }
    }
}
