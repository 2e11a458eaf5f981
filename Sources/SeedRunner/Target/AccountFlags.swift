import AzureStorage
import Foundation

/// az's account flags (`--account-name`, `--blob-endpoint`, `--table-endpoint`, `--sas-token`)
/// as an account: the runner's, not the client library's, vocabulary.
public enum AccountFlags {
    /// The account that az-style options describe, without a connection string: the public
    /// cloud's endpoints of `accountName` or explicit `blobEndpoint`/`tableEndpoint`, and a SAS
    /// given on its own (`sasToken`, a leading `?` allowed) or as the query of an endpoint URL
    /// (az's `--blob-endpoint "https://…?sv=…"`). Several SAS must be the same token. Errors
    /// name the option (a ``Setting``), never the token.
    public static func account(accountName: String?, blobEndpoint: String?, tableEndpoint: String?, sasToken: String?) throws(AccountFlagsError)
        -> StorageAccount
    {
        func refuse(_ reason: Phrase) -> AccountFlagsError { AccountFlagsError(phrase: reason) }
        var tokens: [(Setting, SASToken)] = []
        func split(_ endpoint: String?, _ option: Setting) throws(AccountFlagsError) -> String? {
            guard let endpoint else { return nil }
            guard let mark = endpoint.firstIndex(of: "?") else { return endpoint }
            let query = String(endpoint[endpoint.index(after: mark)...])
            guard let token = SASToken(query) else {
                throw refuse("\(option): its query is not a SAS token with a 'sig' parameter (the query is not shown)")
            }
            tokens.append((option, token))
            return String(endpoint[..<mark])
        }
        let blob = try split(blobEndpoint, .blobEndpoint)
        let table = try split(tableEndpoint, .tableEndpoint)
        if let sasToken {
            guard let token = SASToken(sasToken) else {
                throw refuse("\(Setting.sasToken) is not a SAS token with a 'sig' parameter (the token is not shown)")
            }
            tokens.append((.sasToken, token))
        }
        if let first = tokens.first, let other = tokens.dropFirst().first(where: { $0.1 != first.1 }) {
            throw refuse("\(first.0) and \(other.0) carry different SAS tokens; give one token, with \(Setting.sasToken)")
        }
        guard blob != nil || accountName != nil else { throw refuse(Self.accountNeeded) }
        guard table != nil || accountName != nil else { throw refuse(Self.accountNeeded) }
        if let accountName, StorageNames.accountProblem(accountName) != nil {
            throw refuse("\(Setting.accountName) '\(accountName)' is not a storage account name (3 to 24 lowercase letters and digits)")
        }
        var parts: [String] = []
        if let accountName { parts.append("AccountName=\(accountName)") }
        if let blob { parts.append("BlobEndpoint=\(blob)") }
        if let table { parts.append("TableEndpoint=\(table)") }
        if let token = tokens.first?.1 {
            parts.append("SharedAccessSignature=" + token.query)
        }
        do {
            return try ConnectionString.read(parts.joined(separator: ";"))
        } catch {
            throw refuse(naming(error.reason))
        }
    }

    static let accountNeeded: Phrase = "give \(Setting.accountName), or \(Setting.blobEndpoint) and \(Setting.tableEndpoint)"

    /// A connection-string reason about the endpoints the options made, naming the options.
    private static func naming(_ reason: String) -> Phrase {
        var phrase = Phrase(verbatim: "")
        var rest = Substring(reason)
        while let found = rest.firstRange(of: /BlobEndpoint|TableEndpoint/) {
            phrase = phrase + Phrase(verbatim: String(rest[..<found.lowerBound]))
            phrase = phrase + "\(rest[found] == "BlobEndpoint" ? Setting.blobEndpoint : Setting.tableEndpoint)"
            rest = rest[found.upperBound...]
        }
        return phrase + Phrase(verbatim: String(rest))
    }
}

/// Account flags (``AccountFlags/account(accountName:blobEndpoint:tableEndpoint:sasToken:)``)
/// that do not describe an account; names the flags' settings, never a token.
public struct AccountFlagsError: PersonFacingError, Sendable {
    public var phrase: Phrase
}
