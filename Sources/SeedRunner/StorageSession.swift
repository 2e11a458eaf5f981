import AzureStorage
import Foundation
import SeedKit
import StorageEmulator

/// Where storage work happens: an account, or the embedded storage — the emulator run in
/// this process over a data folder (or reached through the `azseed emulator` that already
/// serves that folder).
public enum StorageLocation: Sendable {
    case account(StorageAccount)
    case embedded(dataDirectory: URL)
}

/// An open target: the run against it, and the embedded server to stop afterwards (or the
/// `azseed emulator` that serves the embedded folder). What every storage command opens.
public struct StorageSession: Sendable {
    public let run: SeedRun
    /// The in-process emulator over the embedded folder, stopped by ``close()``.
    public let server: EmulatorServer?
    /// The `azseed emulator` serving the embedded folder, when this session goes through it.
    public let servedBy: DataFolderOwner?

    /// Opens `location`. For the embedded storage, `command` names this program in the
    /// folder's lock (what another process is told holds it) and `note` hears how the folder
    /// was reached.
    /// With `shard`, the session's run plans, carries out, verifies, resets and exports only
    /// that shard's part (``Shard``).
    /// `configuration` is the clients' (its request log and activity counts among them).
    /// `lockTimeout`: how long to wait for another process that owns the embedded folder.
    public static func open(_ location: StorageLocation, command: String, shard: Shard? = nil, configuration: ClientConfiguration = ClientConfiguration(),
                            lockTimeout: Duration = .zero, note: (String) -> Void = { _ in }) async throws -> StorageSession {
        switch location {
        case .account(let account):
            let target = PlanTarget(account: account.name, blobEndpoint: account.blobEndpoint.absoluteString,
                                    tableEndpoint: account.tableEndpoint.absoluteString)
            return StorageSession(run: SeedRun(account: account, target: target, configuration: configuration, shard: shard), server: nil, servedBy: nil)
        case .embedded(let directory):
            let connection = try await EmbeddedStorage.open(dataDirectory: directory, command: command, lockTimeout: lockTimeout)
            let canonical = StorageAccount.development()
            let target = PlanTarget(account: canonical.name, blobEndpoint: canonical.blobEndpoint.absoluteString,
                                    tableEndpoint: canonical.tableEndpoint.absoluteString, embeddedDataDirectory: directory.standardizedFileURL.path)
            switch connection {
            case .started(let server):
                return StorageSession(run: SeedRun(account: server.account, target: target, configuration: configuration, shard: shard), server: server, servedBy: nil)
            case .served(let owner, let account):
                note("through the 'azseed emulator' that serves it (pid \(owner.pid), \(account.blobEndpoint.absoluteString))")
                return StorageSession(run: SeedRun(account: account, target: target, configuration: configuration, shard: shard), server: nil, servedBy: owner)
            }
        }
    }

    /// Stops the in-process emulator, if this session started one.
    public func close() async { await server?.stop() }

    /// Opens `location`, runs `body`, then closes the session whether or not it threw.
    public static func with<T>(_ location: StorageLocation, command: String, shard: Shard? = nil, configuration: ClientConfiguration = ClientConfiguration(),
                               lockTimeout: Duration = .zero, note: (String) -> Void = { _ in }, _ body: (StorageSession) async throws -> T) async throws -> T {
        let session = try await open(location, command: command, shard: shard, configuration: configuration, lockTimeout: lockTimeout, note: note)
        do {
            let result = try await body(session)
            await session.close()
            return result
        } catch {
            await session.close()
            throw error
        }
    }

    /// Where embedded data lives and how to serve it; nil for an account.
    public var servingNote: String? {
        guard let directory = run.target.embeddedDataDirectory else { return nil }
        if let owner = servedBy, let blob = owner.blobEndpoint, let table = owner.tableEndpoint {
            return "the data lives in \(directory), served by 'azseed emulator' (pid \(owner.pid)) at blob \(blob.absoluteString), table \(table.absoluteString)"
        }
        return "the data lives in \(directory); serve it to the app or Storage Explorer with 'azseed emulator\(directory.hasSuffix(".azseed/storage") ? "" : " --data-dir \(directory)")' (blob \(run.target.blobEndpoint), table \(run.target.tableEndpoint), connection string UseDevelopmentStorage=true)"
    }

    /// Observes the target and plans the way to a generated dataset; `digests` as in
    /// ``Planner``. `onRead` hears the number of entities read so far.
    public func plan(_ desired: GeneratedDataset, counts: [String: Int], access: PublicAccess?, prune: Bool, digests: Bool,
                     onRead: (@Sendable (Int) -> Void)? = nil) async throws -> Plan {
        let header = run.header(for: desired, counts: counts, access: access, prune: prune)
        return try await run.plan(desired.storage, header: header, digests: digests, onRead: onRead)
    }
}
