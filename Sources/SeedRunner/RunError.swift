import AzureStorage

/// A failure of a storage command, as one line a user can act on: what failed, where (URL
/// without secrets, entity keys) and what to do.
public struct RunError: Error, Sendable, CustomStringConvertible, PersonFacingError {
    public var phrase: Phrase

    public init(_ phrase: Phrase) { self.phrase = phrase }

    /// Turns a client error into a `RunError` that says what to do about it.
    public static func explaining(_ error: Error, while doing: String) -> Error {
        switch error {
        case let error as RunError: return error
        case let error as AzureStorageError: return RunError(explain(error, while: doing))
        default: return error
        }
    }

    static func explain(_ error: AzureStorageError, while doing: String) -> Phrase {
        switch (error.kind, error.status, error.code) {
        case (.transport, _, _):
            return
                "\(doing): cannot reach \(error.url): \(error.message)\(error.remedy.map { "; \($0)" as Phrase } ?? ""); check the endpoint in the connection string and that the service is running"
        case (.credential, let status?, _) where status == 400 || status == 401:
            return "\(doing): signing in failed: \(error); check AZURE_TENANT_ID, AZURE_CLIENT_ID and the client secret or certificate"
        case (.credential, _, _):
            return "\(doing): signing in failed: \(error)"
        case (.service, 401, .invalidAuthenticationInfo?):
            let lines = error.message.split(whereSeparator: \.isNewline)
            let detail = lines.count > 1 ? String(lines[1]) : String(lines.first ?? "")
            return
                "\(doing): \(error.url) refused the token (401 InvalidAuthenticationInfo: \(detail)); check that the identity belongs to the account's tenant and the token is for https://storage.azure.com"
        case (.service, 403, .authenticationFailed?), (.service, 403, nil):
            let reason = error.message.split(whereSeparator: \.isNewline).first.map { ": \($0)" } ?? ""
            return
                "\(doing): \(error.url) refused the credentials (403 AuthenticationFailed\(reason)); check AccountName and AccountKey (or the SAS) in the connection string"
        case (.service, 403, .authorizationPermissionMismatch?):
            let needed = permission(for: error.operation).map { " lacks \($0) for \(error.operation) on" } ?? " does not permit \(error.operation) on"
            return "\(doing): the SAS (or role)\(needed) \(error.url) (403 AuthorizationPermissionMismatch); use one that grants it"
        case (.service, 403, let code?):
            return "\(doing): \(error.operation) \(error.url) is not permitted (403 \(code)); the credentials lack the permission it needs"
        default:
            return "\(doing): \(error)"
        }
    }

    /// The SAS permission letter an operation needs, as the service checks it.
    static func permission(for operation: String) -> String? {
        switch operation {
        case "Get Blob", "Get Blob Properties", "Get Container Properties", "Get Container ACL", "Query Entities", "Get Entity", "Query Tables":
            "'r' (read)"
        case "List Blobs", "List Containers": "'l' (list)"
        case "Put Blob", "Put Block", "Put Block List", "Set Blob Properties", "Set Container ACL", "Create Container": "'w' (write) or 'c' (create)"
        case "Delete Blob", "Delete Container", "Delete Entity", "Delete Table": "'d' (delete)"
        case "Insert Entity", "Create Table": "'a' (add)"
        case "Update Entity", "Merge Entity": "'u' (update)"
        case "Insert Or Replace Entity", "Insert Or Merge Entity": "'a' (add) and 'u' (update)"
        case "Entity Group Transaction": "'a' (add), 'u' (update) or 'd' (delete)"
        default: nil
        }
    }
}
