import Foundation

/// Parses Azure Storage connection strings (docs/PROTOCOL.md §1).
public enum ConnectionString {
    /// The environment variable read when no connection string is passed.
    public static let environmentVariable = "AZURE_STORAGE_CONNECTION_STRING"
    /// What `azseed emulator` prints where the development key goes (it prints no key).
    package static let developmentKeyPlaceholder = "<the development key>"

    /// Parses `key=value;…` (keys case-insensitive, split on the first `=`, a trailing `;`
    /// allowed) into an account. Errors name the bad part and never include a key or signature.
    /// A refusal is an ``AzureStorageError`` of kind ``AzureStorageError/Kind/invalidConnectionString``.
    public static func parse(_ text: String) throws(AzureStorageError) -> StorageAccount {
        do { return try read(text) } catch { throw error.storageError }
    }

    package static func read(_ text: String) throws(ConnectionStringError) -> StorageAccount {
        var settings: [String: String] = [:]
        for (position, rawPart) in text.split(separator: ";", omittingEmptySubsequences: false).enumerated() {
            let part = rawPart.trimmingCharacters(in: .whitespacesAndNewlines)
            if part.isEmpty { continue }
            guard let eq = part.firstIndex(of: "=") else {
                // The part's text is not shown: it may be a piece of a key.
                throw ConnectionStringError("part \(position + 1) is not a key=value pair")
            }
            let key = part[..<eq].trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            let value = String(part[part.index(after: eq)...]).trimmingCharacters(in: .whitespacesAndNewlines)
            guard Self.knownKeys.contains(key) else {
                // A key's name is a word; anything else before the '=' is not shown: it may be
                // an account key that lost its "AccountKey=" (base64 ends in '=').
                let name = part[..<eq].trimmingCharacters(in: .whitespaces)
                let shown = name.count <= 40 && name.allSatisfy { $0.isASCII && $0.isLetter } ? "'\(name)'" : "in part \(position + 1) (not shown)"
                throw ConnectionStringError(
                    "unknown key \(shown) (known: AccountName, AccountKey, DefaultEndpointsProtocol, EndpointSuffix, BlobEndpoint, TableEndpoint, QueueEndpoint, FileEndpoint, SharedAccessSignature, UseDevelopmentStorage, DevelopmentStorageProxyUri)"
                )
            }
            if settings[key] != nil { throw ConnectionStringError("'\(part[..<eq])' is given twice") }
            settings[key] = value
        }
        if settings.isEmpty { throw ConnectionStringError("it is empty") }

        if let dev = settings["usedevelopmentstorage"] {
            guard dev.lowercased() == "true" else { throw ConnectionStringError("UseDevelopmentStorage must be 'true'") }
            var account = StorageAccount.development()
            if let blob = settings["blobendpoint"] { account.blobEndpoint = try endpoint(blob, "BlobEndpoint") }
            if let table = settings["tableendpoint"] { account.tableEndpoint = try endpoint(table, "TableEndpoint") }
            return account
        }

        let credential: StorageCredential
        if let key = settings["accountkey"] {
            guard let decoded = AccountKey(base64: key) else {
                if key == Self.developmentKeyPlaceholder {
                    // Pasted from `azseed emulator`'s line, which never prints a key.
                    throw ConnectionStringError(
                        "AccountKey is the placeholder \(key) the emulator prints: put the development key in its place, or write UseDevelopmentStorage=true with the BlobEndpoint and TableEndpoint instead of AccountName and AccountKey"
                    )
                }
                throw ConnectionStringError("AccountKey is not valid base64 (the key itself is not shown)")
            }
            credential = .sharedKey(decoded)
        } else if let sas = settings["sharedaccesssignature"] {
            guard let token = SASToken(sas) else {
                throw ConnectionStringError("SharedAccessSignature is not a SAS token with a 'sig' parameter (the token is not shown)")
            }
            credential = .sas(token)
        } else {
            credential = .anonymous
        }

        let scheme = (settings["defaultendpointsprotocol"] ?? "https").lowercased()
        guard scheme == "https" || scheme == "http" else {
            throw ConnectionStringError("DefaultEndpointsProtocol must be http or https, not '\(scheme)'")
        }
        let suffix = settings["endpointsuffix"] ?? "core.windows.net"

        var name = settings["accountname"]
        let blob: URL
        let table: URL
        if let explicit = settings["blobendpoint"] {
            blob = try endpoint(explicit, "BlobEndpoint")
        } else {
            guard let name else { throw ConnectionStringError("it needs AccountName or BlobEndpoint") }
            blob = try endpoint("\(scheme)://\(name).blob.\(suffix)", "the blob endpoint")
        }
        if let explicit = settings["tableendpoint"] {
            table = try endpoint(explicit, "TableEndpoint")
        } else {
            guard let name else { throw ConnectionStringError("it needs AccountName or TableEndpoint") }
            table = try endpoint("\(scheme)://\(name).table.\(suffix)", "the table endpoint")
        }
        if name == nil { name = accountName(from: blob) }
        guard let accountName = name, !accountName.isEmpty else { throw ConnectionStringError("it needs AccountName") }
        if case .sharedKey = credential, settings["accountname"] == nil {
            throw ConnectionStringError("AccountKey needs AccountName")
        }
        return StorageAccount(name: accountName, credential: credential, blobEndpoint: blob, tableEndpoint: table)
    }

    /// The account named by the environment, if `AZURE_STORAGE_CONNECTION_STRING` is set.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(AzureStorageError)
        -> StorageAccount?
    {
        guard let text = environment[environmentVariable], !text.isEmpty else { return nil }
        do {
            return try read(text)
        } catch {
            throw ConnectionStringError("\(environmentVariable): \(error.reason)", prefixed: false).storageError
        }
    }

    private static let knownKeys: Set<String> = [
        "accountname", "accountkey", "defaultendpointsprotocol", "endpointsuffix", "blobendpoint", "tableendpoint",
        "queueendpoint", "fileendpoint", "sharedaccesssignature", "usedevelopmentstorage", "developmentstorageproxyuri",
    ]

    private static func endpoint(_ text: String, _ what: String) throws(ConnectionStringError) -> URL {
        var trimmed = text
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        // Messages show the endpoint through SecretRedaction: a SAS in its query or a key in
        // its user-info must not come back out.
        let shown = SecretRedaction.redact(text)
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw ConnectionStringError("\(what) '\(shown)' is not an http(s) URL")
        }
        guard url.user == nil && url.password == nil else {
            throw ConnectionStringError("\(what) '\(shown)' carries user-info; put the credential in AccountKey or SharedAccessSignature")
        }
        guard url.query == nil else {
            throw ConnectionStringError("\(what) '\(shown)' has a query string; put a SAS in SharedAccessSignature")
        }
        return url
    }

    /// The account of an endpoint: the first path segment of a path-style URL (an IP
    /// address or a host without dots), else the first label of the host.
    static func accountName(from url: URL) -> String? {
        let host = url.host ?? ""
        let isIP = host.split(separator: ".").count == 4 && host.split(separator: ".").allSatisfy { Int($0) != nil } || host.contains(":")
        if isIP || !host.contains(".") {
            return url.path.split(separator: "/").first.map(String.init)
        }
        return host.split(separator: ".").first.map(String.init)
    }
}

/// Why a connection string was refused; it never contains a key or signature. Reaches callers
/// as an ``AzureStorageError`` (``storageError``).
package struct ConnectionStringError: Error, CustomStringConvertible, Sendable {
    package let reason: String
    let prefixed: Bool

    init(_ reason: String, prefixed: Bool = true) {
        self.reason = reason
        self.prefixed = prefixed
    }

    package var description: String { prefixed ? "malformed connection string: \(reason)" : "malformed connection string in \(reason)" }

    package var storageError: AzureStorageError {
        AzureStorageError(kind: .invalidConnectionString, operation: "Read connection string", url: "", message: description)
    }
}

extension ConnectionStringError {
    /// A connection string without AccountKey or SharedAccessSignature where requests must be
    /// signed (the Table service answers no anonymous request).
    package static let noCredential = ConnectionStringError("it has neither AccountKey nor SharedAccessSignature; the Table service needs one")
}
