import Foundation
import StorageProtocol

/// The embedded default: with no connection string, a storage command starts the emulator
/// in-process on loopback (free ports) over the data directory and talks to it through the
/// normal client and HTTP, exactly as it would to Azure.
///
/// A data folder has one owner (`DataFolderLock`). When an `azseed emulator` already serves
/// the folder, the command talks to that emulator instead of opening the folder itself.
public enum EmbeddedStorage {
    /// Where the embedded storage lives, relative to the working directory.
    public static let defaultDataDirectory = ".azseed/storage"

    /// How a command reaches the embedded storage.
    public enum Connection: Sendable {
        /// Started in this process; stop it when done.
        case started(EmulatorServer)
        /// Served by the `azseed emulator` that owns the folder.
        case served(by: DataFolderOwner, account: ServedAccount)
    }

    /// Starts the in-process emulator over `dataDirectory` on 127.0.0.1 with free ports, or,
    /// when an `azseed emulator` owns the folder, connects to it. `command` names this
    /// process in the folder's lock. Throws `DataFolderBusy` when any other process owns it
    /// for longer than `lockTimeout` (`--lock-timeout`: waiting for another command to finish,
    /// as Terraform waits for its state lock).
    public static func open(dataDirectory: URL, command: String, lockTimeout: Duration = .zero) async throws -> Connection {
        let deadline = ContinuousClock.now + lockTimeout
        var configuration = EmulatorConfiguration(dataDirectory: dataDirectory, host: "127.0.0.1", blobPort: 0, tablePort: 0)
        configuration.command = command
        // An emulator that has just taken the folder writes its endpoints once it listens:
        // wait a moment for them rather than call it busy.
        var attempts = 0
        while true {
            do {
                return .started(try await EmulatorServer.start(configuration))
            } catch let busy as DataFolderBusy {
                if let owner = busy.owner, owner.isServing, let blob = owner.blobEndpoint, let table = owner.tableEndpoint {
                    let account = ServedAccount(
                        name: ServedAccount.developmentAccountName, key: AccountKey(base64: ServedAccount.developmentAccountKey)!,
                        blobEndpoint: blob, tableEndpoint: table)
                    return .served(by: owner, account: account)
                }
                let starting = busy.owner == nil || busy.owner?.command == DataFolderLock.emulatorCommand
                attempts += 1
                guard (starting && attempts < 25) || ContinuousClock.now < deadline else { throw busy }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}
