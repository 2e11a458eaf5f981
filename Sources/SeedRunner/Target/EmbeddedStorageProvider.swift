import AzureStorage
import Foundation

/// How a session reaches an embedded data folder: the program supplies it (the azseed
/// executable and AzseedTesting supply the emulator's, `EmulatorEmbeddedStorage`), so
/// SeedRunner — and every program that only seeds real accounts — links no emulator.
public protocol EmbeddedStorageProvider: Sendable {
    /// Opens `dataDirectory`: serves it in this process, or reaches the `azseed emulator`
    /// that already does. `command` names this process in the folder's lock; another owner
    /// is waited for up to `lockTimeout`.
    func open(dataDirectory: URL, command: String, lockTimeout: Duration) async throws -> EmbeddedStorageConnection
}

/// An embedded data folder, open.
public struct EmbeddedStorageConnection: Sendable {
    /// The account that serves it.
    public var account: StorageAccount
    /// The `azseed emulator` process that serves the folder; nil when it is served by this process.
    public var servedBy: EmbeddedServer?
    /// Stops serving (when this process serves it).
    public var close: @Sendable () async -> Void

    public init(account: StorageAccount, servedBy: EmbeddedServer?, close: @escaping @Sendable () async -> Void) {
        self.account = account
        self.servedBy = servedBy
        self.close = close
    }
}

/// Another process serving an embedded folder: who it is and where it listens.
public struct EmbeddedServer: Sendable, Equatable {
    public var pid: Int32
    public var blobEndpoint: URL
    public var tableEndpoint: URL

    public init(pid: Int32, blobEndpoint: URL, tableEndpoint: URL) {
        self.pid = pid
        self.blobEndpoint = blobEndpoint
        self.tableEndpoint = tableEndpoint
    }
}
