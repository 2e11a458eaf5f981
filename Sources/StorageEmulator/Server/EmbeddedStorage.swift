import AzureStorage
import Foundation

/// The embedded default: with no connection string, a storage command starts the emulator
/// in-process on loopback (free ports) over the data directory and talks to it through the
/// normal client and HTTP, exactly as it would to Azure.
public enum EmbeddedStorage {
    /// Where the embedded storage lives, relative to the working directory.
    public static let defaultDataDirectory = ".azseed/storage"

    /// Starts the in-process emulator over `dataDirectory` on 127.0.0.1 with free ports.
    public static func start(dataDirectory: URL) async throws -> EmulatorServer {
        try await EmulatorServer.start(EmulatorConfiguration(dataDirectory: dataDirectory, host: "127.0.0.1", blobPort: 0, tablePort: 0))
    }
}
