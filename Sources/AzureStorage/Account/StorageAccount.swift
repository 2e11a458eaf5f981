import Foundation

/// How requests to an account are authorised.
public enum StorageCredential: Sendable, Equatable {
    /// Shared Key (and Shared Key Lite) signing with the account key.
    case sharedKey(AccountKey)
    /// A SAS token appended to every URL (without the leading `?`).
    case sas(SASToken)
    /// Microsoft Entra ID: an `Authorization: Bearer` token from the source's credential
    /// (HTTPS endpoints only).
    case bearer(BearerTokenSource)
    /// No credential: anonymous requests (public containers only).
    case anonymous
}

/// A SAS token; its description hides the signature.
public struct SASToken: Sendable, Equatable, CustomStringConvertible {
    /// The token's query parameters, decoded, in their original order.
    public let parameters: [(String, String)]

    public init?(_ text: String) {
        let trimmed = text.hasPrefix("?") ? String(text.dropFirst()) : text
        var parameters: [(String, String)] = []
        for pair in trimmed.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let name = PercentEncoding.decodeQueryComponent(parts[0]),
                let value = PercentEncoding.decodeQueryComponent(parts[1])
            else { return nil }
            parameters.append((name, value))
        }
        guard parameters.contains(where: { $0.0 == "sig" }) else { return nil }
        self.parameters = parameters
    }

    public static func == (a: SASToken, b: SASToken) -> Bool {
        a.parameters.count == b.parameters.count && zip(a.parameters, b.parameters).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    public var description: String { "SASToken(sig=redacted)" }
}

/// An account's name, endpoints and credential, as a connection string describes it.
public struct StorageAccount: Sendable, Equatable {
    public var name: String
    public var credential: StorageCredential
    /// The blob service endpoint, without a trailing slash (path-style endpoints include
    /// the account: `http://127.0.0.1:10000/devstoreaccount1`).
    public var blobEndpoint: URL
    public var tableEndpoint: URL

    public init(name: String, credential: StorageCredential, blobEndpoint: URL, tableEndpoint: URL) {
        self.name = name
        self.credential = credential
        self.blobEndpoint = blobEndpoint
        self.tableEndpoint = tableEndpoint
    }

    /// The emulator account name.
    public static let developmentAccountName = ServedAccount.developmentAccountName
    /// The emulator's well-known key (public, the same in every emulator).
    public static let developmentAccountKey = ServedAccount.developmentAccountKey

    /// The account a server serves, signed with its shared key.
    public init(_ served: ServedAccount) {
        self.init(name: served.name, credential: .sharedKey(served.key), blobEndpoint: served.blobEndpoint, tableEndpoint: served.tableEndpoint)
    }

    /// The development account on `host` with the given ports (10000 and 10002 by default).
    public static func development(host: String = "127.0.0.1", blobPort: Int = 10000, tablePort: Int = 10002) -> StorageAccount {
        StorageAccount(
            name: developmentAccountName, credential: .sharedKey(AccountKey(base64: developmentAccountKey)!),
            blobEndpoint: URL(string: "http://\(host):\(blobPort)/\(developmentAccountName)")!,
            tableEndpoint: URL(string: "http://\(host):\(tablePort)/\(developmentAccountName)")!)
    }

    /// The connection string of this account, with the key — for handing to a child
    /// process; never print it. A bearer credential has no connection-string form: only the
    /// endpoints are written.
    public var connectionString: String {
        var parts = ["AccountName=\(name)"]
        switch credential {
        case .sharedKey(let key): parts.append("AccountKey=\(Data(key.bytes).base64EncodedString())")
        case .sas(let token): parts.append("SharedAccessSignature=\(token.query)")
        case .bearer, .anonymous: break
        }
        parts.append("BlobEndpoint=\(blobEndpoint.absoluteString)")
        parts.append("TableEndpoint=\(tableEndpoint.absoluteString)")
        return parts.joined(separator: ";")
    }

    /// The endpoint host is a loopback address (deletes there need no `--yes`).
    public var isLoopback: Bool {
        [blobEndpoint, tableEndpoint].allSatisfy { url in
            let host = url.host ?? ""
            return host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
        }
    }
}

extension AccountServer {
    /// The served account as a client's `StorageAccount`.
    public var account: StorageAccount { StorageAccount(servedAccount) }
}
