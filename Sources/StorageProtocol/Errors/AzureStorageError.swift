import Foundation

/// Every failure of the library: a service error (status and `x-ms-error-code`), a transport
/// failure, a request refused before it was sent, an answer that could not be understood, or
/// a connection string that cannot be used. One public type over an opaque kind, so new kinds
/// and codes can be added without breaking a caller's `switch`.
public struct AzureStorageError: Error, Sendable, CustomStringConvertible, PersonFacingError {
    /// What failed. Compare with `==` or match in a `switch` with a `default`.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable { case service, transport, invalidRequest, invalidResponse, invalidConnectionString, credential }
        private let base: Base

        /// The service answered with an error status.
        public static let service = Kind(base: .service)
        /// The request could not be sent or no answer came (connection refused, timeout…).
        public static let transport = Kind(base: .transport)
        /// The request was invalid and was never sent (a name, key or size rule).
        public static let invalidRequest = Kind(base: .invalidRequest)
        /// The answer could not be understood.
        public static let invalidResponse = Kind(base: .invalidResponse)
        /// A connection string that is malformed or lacks what is needed; never echoes a secret.
        public static let invalidConnectionString = Kind(base: .invalidConnectionString)
        /// No Microsoft Entra ID token could be obtained (a credential is missing or was refused).
        public static let credential = Kind(base: .credential)

        public var description: String { base.rawValue }
    }

    /// A service error code (`x-ms-error-code`), compared by its exact text. The well-known
    /// ones are named; any other arrives as it was sent.
    public struct Code: Sendable, Hashable, RawRepresentable, ExpressibleByStringLiteral, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        public var description: String { rawValue }

        public static func == (a: Code, b: Code) -> Bool { a.rawValue.isExactly(b.rawValue) }
        public func hash(into hasher: inout Hasher) { ExactString(rawValue).hash(into: &hasher) }
    }

    /// The operation of an entity group transaction that failed (nothing was applied).
    public struct BatchOperation: Sendable, Equatable {
        /// Its 0-based index in the batch.
        public var index: Int
        public var partitionKey: String?
        public var rowKey: String?

        public init(index: Int, partitionKey: String?, rowKey: String?) {
            self.index = index
            self.partitionKey = partitionKey
            self.rowKey = rowKey
        }
    }

    public var kind: Kind
    /// The operation, e.g. "Put Blob".
    public var operation: String
    /// The URL without its query string, so a SAS signature can never appear.
    public var url: String
    public var status: Int?
    /// The service's error code (`x-ms-error-code`), e.g. ``Code/entityAlreadyExists``.
    public var code: Code?
    public var message: String
    /// What to do about it, when the library knows: a ``Phrase`` whose settings the program
    /// that shows the error spells (``description(naming:)``).
    public var remedy: Phrase?
    public var requestID: String?
    /// For an entity group transaction the service refused: which operation failed, when the
    /// service named it.
    public var failedOperation: BatchOperation?
    /// For a copy whose source could not be read (`CannotVerifyCopySource`): the status the
    /// source answered the service with (`x-ms-copy-source-status-code`), nil when it gave none
    /// (unreachable).
    public var copySourceStatus: Int?

    public init(
        kind: Kind, operation: String, url: String, status: Int? = nil, code: Code? = nil, message: String, requestID: String? = nil,
        failedOperation: BatchOperation? = nil
    ) {
        self.kind = kind
        self.operation = operation
        self.url = url
        self.status = status
        self.code = code
        self.message = message
        self.requestID = requestID
        self.failedOperation = failedOperation
    }

    public var description: String { phrase.description }

    /// The one-line description, the remedy's settings left for the program to spell.
    public var phrase: Phrase {
        let remedy: Phrase = remedy.map { "; \($0)" } ?? ""
        if kind == .invalidConnectionString { return Phrase(verbatim: message) + remedy }
        var s = url.isEmpty ? "\(operation) failed" : "\(operation) \(url) failed"
        if let failed = failedOperation {
            s += " at operation \(failed.index)"
            if let pk = failed.partitionKey, let rk = failed.rowKey { s += " (PartitionKey '\(pk)', RowKey '\(rk)')" }
        }
        s += ": "
        if let status { s += "\(status) " }
        if let code { s += "\(code): " }
        s += message.split(whereSeparator: \.isNewline).first.map(String.init) ?? message
        return Phrase(verbatim: s) + remedy + Phrase(verbatim: requestID.map { " (request id \($0))" } ?? "")
    }

    /// Whether a retry may succeed: 408, 429, 500, 502, 503, 504 and transport failures.
    ///
    /// A retried write that the server had already applied (a 500 OperationTimedOut after
    /// commit) answers as if the first attempt won: an Insert then gets 409
    /// EntityAlreadyExists, a Put Blob with `If-None-Match: *` 409 BlobAlreadyExists, a
    /// Delete 404. Callers reconcile those instead of reporting them.
    public var isTransient: Bool {
        if kind == .transport { return true }
        // A copy whose source the service cannot read is retried when the source itself was
        // busy or failing (its status, `x-ms-copy-source-status-code`); unreachable or refused,
        // it fails the same way again: the caller decides, at once, what to do instead.
        if code == .cannotVerifyCopySource { return [429, 500, 502, 503, 504].contains(copySourceStatus ?? 0) }
        return kind == .service && [408, 429, 500, 502, 503, 504].contains(status ?? 0)
    }
}

extension AzureStorageError {
    /// Reads a service error from a response: the code from `x-ms-error-code` or the body
    /// (Blob XML `<Error><Code>`, Table JSON `odata.error`), the message from the body.
    public static func from(_ response: TransportResponse, operation: String, url: String) -> AzureStorageError {
        var code = response.headers["x-ms-error-code"]
        var message = HTTPStatus.reason(response.status)
        if let json = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let error = (json["odata.error"] ?? json["error"]) as? [String: Any]
        {
            code = code ?? error["code"] as? String
            if let m = error["message"] as? [String: Any], let value = m["value"] as? String {
                message = value
            } else if let m = error["message"] as? String {
                message = m
            }
        } else if let text = String(data: response.body, encoding: .utf8), text.contains("<Error>") {
            code = code ?? XMLText.element("Code", in: text)
            message = XMLText.element("Message", in: text) ?? message
        }
        var error = AzureStorageError(
            kind: .service, operation: operation, url: url, status: response.status, code: code.map(Code.init(rawValue:)),
            message: message, requestID: response.headers["x-ms-request-id"])
        error.copySourceStatus = response.headers["x-ms-copy-source-status-code"].flatMap { Int($0) }
        return error
    }
}

/// Reason phrases for messages.
public enum HTTPStatus {
    public static func reason(_ status: Int) -> String {
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
