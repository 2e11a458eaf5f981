import Foundation

extension ConnectionString {
    /// The account that az-style options describe, without a connection string: the public
    /// cloud's endpoints of `accountName` or explicit `blobEndpoint`/`tableEndpoint`, and a SAS
    /// given on its own (`sasToken`, a leading `?` allowed) or as the query of an endpoint URL
    /// (az's `--blob-endpoint "https://…?sv=…"`). Several SAS must be the same token. Errors
    /// name the option, never the token.
    public static func account(accountName: String?, blobEndpoint: String?, tableEndpoint: String?, sasToken: String?) throws(AzureStorageError)
        -> StorageAccount
    {
        func refuse(_ reason: String) -> AzureStorageError {
            AzureStorageError(kind: .invalidConnectionString, operation: "Read account options", url: "", message: reason)
        }
        var tokens: [(String, SASToken)] = []
        func split(_ endpoint: String?, _ option: String) throws(AzureStorageError) -> String? {
            guard let endpoint else { return nil }
            guard let mark = endpoint.firstIndex(of: "?") else { return endpoint }
            let query = String(endpoint[endpoint.index(after: mark)...])
            guard let token = SASToken(query) else {
                throw refuse("\(option): its query is not a SAS token with a 'sig' parameter (the query is not shown)")
            }
            tokens.append((option, token))
            return String(endpoint[..<mark])
        }
        let blob = try split(blobEndpoint, "--blob-endpoint")
        let table = try split(tableEndpoint, "--table-endpoint")
        if let sasToken {
            guard let token = SASToken(sasToken) else {
                throw refuse("--sas-token is not a SAS token with a 'sig' parameter (the token is not shown)")
            }
            tokens.append(("--sas-token", token))
        }
        if let first = tokens.first, let other = tokens.dropFirst().first(where: { $0.1 != first.1 }) {
            throw refuse("\(first.0) and \(other.0) carry different SAS tokens; give one token, with --sas-token")
        }
        guard blob != nil || accountName != nil else { throw refuse("give --account-name, or --blob-endpoint and --table-endpoint") }
        guard table != nil || accountName != nil else { throw refuse("give --account-name, or --blob-endpoint and --table-endpoint") }
        if let accountName, StorageNames.accountProblem(accountName) != nil {
            throw refuse("--account-name '\(accountName)' is not a storage account name (3 to 24 lowercase letters and digits)")
        }
        var parts: [String] = []
        if let accountName { parts.append("AccountName=\(accountName)") }
        if let blob { parts.append("BlobEndpoint=\(blob)") }
        if let table { parts.append("TableEndpoint=\(table)") }
        if let token = tokens.first?.1 {
            parts.append("SharedAccessSignature=" + token.query)
        }
        do {
            return try read(parts.joined(separator: ";"))
        } catch {
            throw refuse(
                error.reason.replacingOccurrences(of: "BlobEndpoint", with: "--blob-endpoint").replacingOccurrences(
                    of: "TableEndpoint", with: "--table-endpoint"))
        }
    }
}
