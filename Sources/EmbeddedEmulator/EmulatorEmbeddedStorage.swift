import AzureStorage
import Foundation
import SeedRunner
import StorageEmulator

/// The emulator as a session's embedded storage (``EmbeddedStorageProvider``): it serves the
/// folder in this process on free loopback ports, or reaches the `azseed emulator` that
/// already serves it (``EmbeddedStorage/open(dataDirectory:command:lockTimeout:)``).
public struct EmulatorEmbeddedStorage: EmbeddedStorageProvider {
    public init() {}

    public func open(dataDirectory: URL, command: String, lockTimeout: Duration) async throws -> EmbeddedStorageConnection {
        switch try await EmbeddedStorage.open(dataDirectory: dataDirectory, command: command, lockTimeout: lockTimeout) {
        case .started(let server):
            return EmbeddedStorageConnection(account: server.account, servedBy: nil, close: { await server.stop() })
        case .served(let owner, let account):
            return EmbeddedStorageConnection(
                account: account,
                servedBy: EmbeddedServer(
                    pid: owner.pid, blobEndpoint: account.blobEndpoint,
                    tableEndpoint: account.tableEndpoint), close: {})
        }
    }
}
