import AzureStorage
import Foundation
import SeedRunner
import StorageEmulator

/// The emulator as a session's embedded storage (``EmbeddedStorageProvider``): it serves the
/// folder in this process on free loopback ports, or reaches the `azseed emulator` that
/// already serves it (``EmbeddedStorage/open(dataDirectory:command:lockTimeout:)``).
public struct EmulatorEmbeddedStorage: EmbeddedStorageProvider {
    /// For a command that only reads (a plan, a verify, any dry run): a data folder that does
    /// not exist is an empty account, served from memory — the folder is not made, nothing
    /// is written anywhere.
    public var readOnly: Bool

    public init(readOnly: Bool = false) { self.readOnly = readOnly }

    /// Whether the nearest folder above `folder` that exists is a folder: a path under a file
    /// is refused as opening it would refuse it (naming the file), dry run or not.
    static func couldBeMade(_ folder: URL) -> Bool {
        var parent = folder.standardizedFileURL.deletingLastPathComponent()
        while true {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: parent.path, isDirectory: &isFolder) { return isFolder.boolValue }
            let up = parent.deletingLastPathComponent()
            if up.path == parent.path { return false }
            parent = up
        }
    }

    /// Scratch storage in memory on free loopback ports, for one use and then closed
    /// (`migrate rehearse`): nothing is written to disk.
    public static func scratch() async throws -> EmbeddedStorageConnection {
        let server = try await EmulatorServer.start(EmulatorConfiguration(dataDirectory: nil, host: "127.0.0.1", blobPort: 0, tablePort: 0))
        return EmbeddedStorageConnection(account: server.account, servedBy: nil, close: { await server.stop() })
    }

    public func open(dataDirectory: URL, command: String, lockTimeout: Duration) async throws -> EmbeddedStorageConnection {
        if readOnly, !FileManager.default.fileExists(atPath: dataDirectory.path), Self.couldBeMade(dataDirectory) {
            return try await Self.scratch()
        }
        switch try await EmbeddedStorage.open(dataDirectory: dataDirectory, command: command, lockTimeout: lockTimeout) {
        case .started(let server):
            return EmbeddedStorageConnection(account: server.account, servedBy: nil, close: { await server.stop() })
        case .served(let owner, let account):
            return EmbeddedStorageConnection(
                account: StorageAccount(account),
                servedBy: EmbeddedServer(
                    pid: owner.pid, blobEndpoint: account.blobEndpoint,
                    tableEndpoint: account.tableEndpoint), close: {})
        }
    }
}
