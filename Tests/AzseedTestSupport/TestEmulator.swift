import Foundation
import StorageEmulator

/// The emulator as tests run it: on free loopback ports, in memory unless given a folder.
public enum TestEmulator {
    /// Runs `body` against a fresh emulator, stopping it afterwards whether or not `body` threw.
    public static func withRunning<T>(
        dataDirectory: URL? = nil, faultRate: Double = 0, faultSeed: UInt64 = 11,
        _ body: (EmulatorServer) async throws -> T
    ) async throws -> T {
        try await EmulatorServer.withRunning(
            EmulatorConfiguration(
                dataDirectory: dataDirectory, blobPort: 0, tablePort: 0,
                faultRate: faultRate, faultSeed: faultSeed), body)
    }
}
