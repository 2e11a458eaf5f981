import AzureStorage

/// A failure of a storage command, as one line a user can act on: what failed, where (URL
/// without secrets, entity keys) and what to do.
public struct RunError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }

    /// Turns a client error into a `RunError` that says what to do about it.
    public static func explaining(_ error: Error, while doing: String) -> Error {
        switch error {
        case let error as RunError: return error
        case let error as AzureStorageError: return RunError(explain(error, while: doing))
        default: return error
        }
    }

    static func explain(_ error: AzureStorageError, while doing: String) -> String {
        switch (error.kind, error.status, error.code) {
        case (.transport, _, _):
            return "\(doing): cannot reach \(error.url): \(error.message); check the endpoint in the connection string and that the service is running"
        case (.service, 403, .authenticationFailed?), (.service, 403, nil):
            let reason = error.message.split(whereSeparator: \.isNewline).first.map { ": \($0)" } ?? ""
            return "\(doing): \(error.url) refused the credentials (403 AuthenticationFailed\(reason)); check AccountName and AccountKey (or the SAS) in the connection string"
        case (.service, 403, let code?):
            return "\(doing): \(error.operation) \(error.url) is not permitted (403 \(code)); the credentials lack the permission it needs"
        default:
            return "\(doing): \(error)"
        }
    }
}
