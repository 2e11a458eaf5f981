import StorageProtocol

/// An error the emulator answers with: HTTP status, Azure's error code (sent in
/// `x-ms-error-code` and the body) and a message.
struct ServiceError: Error, Sendable {
    var status: Int
    var code: AzureStorageError.Code
    var message: String
    /// Extra response headers (e.g. `Content-Range` on a 416).
    var headers: [(String, String)] = []
    /// Extra elements of a Blob error body after the message (`HeaderName`, `HeaderValue`).
    var details: [(String, String)] = []

    init(_ status: Int, _ code: AzureStorageError.Code, _ message: String, headers: [(String, String)] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    static func invalidInput(_ message: String) -> ServiceError { ServiceError(400, .invalidInput, message) }
    static func invalidHeader(_ name: String, _ value: String) -> ServiceError {
        ServiceError(400, .invalidHeaderValue, "The value '\(value)' for header '\(name)' is not valid.")
    }
    /// Azure's sentence first (the Tables SDK recognises it and adds its "check your account URL"
    /// hint), then which parameter: in the message for Tables' JSON, as elements for Blob's XML.
    static func invalidQuery(_ name: String, _ value: String) -> ServiceError {
        var error = ServiceError(
            400, .invalidQueryParameterValue,
            "Value for one of the query parameters specified in the request URI is invalid: '\(name)' is '\(value)'.")
        error.details = [("QueryParameterName", name), ("QueryParameterValue", value)]
        return error
    }
    static let authenticationFailed = ServiceError(
        403, .authenticationFailed,
        "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.")
    /// A header that changes the operation's meaning and that the emulator does not implement.
    static func unsupportedHeader(_ name: String) -> ServiceError {
        ServiceError(
            400, .unsupportedHeader,
            "One of the HTTP headers specified in the request is not supported: \(name) is not implemented by this emulator; the request was not carried out."
        )
    }

    static let resourceNotFound = ServiceError(404, .resourceNotFound, "The specified resource does not exist.")
    static let bodyTooLarge = ServiceError(413, .requestBodyTooLarge, "The request body is too large and exceeds the maximum permissible limit.")
    static func unsupportedVerb(_ method: String) -> ServiceError {
        ServiceError(405, .unsupportedHttpVerb, "The resource doesn't support specified Http Verb \(method).")
    }
}
