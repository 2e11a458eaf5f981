import Foundation

/// An account as a storage server serves it: its name, its shared key and the endpoints of its
/// Blob and Table services. The emulator describes itself this way; AzureStorage turns it into
/// a client's `StorageAccount` (`AccountServer.account`), so the server needs no client types.
public struct ServedAccount: Sendable {
    public var name: String
    public var key: AccountKey
    public var blobEndpoint: URL
    public var tableEndpoint: URL

    public init(name: String, key: AccountKey, blobEndpoint: URL, tableEndpoint: URL) {
        self.name = name
        self.key = key
        self.blobEndpoint = blobEndpoint
        self.tableEndpoint = tableEndpoint
    }

    /// The emulator account name.
    public static let developmentAccountName = "devstoreaccount1"
    /// The emulator's well-known key (public, the same in every emulator).
    public static let developmentAccountKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
}

/// Something that serves an account (the emulator): AzureStorage gives it an `account`.
public protocol AccountServer: Sendable {
    /// The account served, with endpoints on the ports actually bound.
    var servedAccount: ServedAccount { get }
}
