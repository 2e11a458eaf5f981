import AzureStorage
import Foundation
import SeedKit

/// An open target: the run against it, and the embedded server to stop afterwards (or the
/// `azseed emulator` that serves the embedded folder). What every storage command opens.
public struct StorageSession: Sendable {
    public let run: SeedRun
    /// Whether this process serves the embedded folder (stopped by ``close()``).
    public let servesHere: Bool
    /// The `azseed emulator` serving the embedded folder, when this session goes through it.
    public let servedBy: EmbeddedServer?
    private let stop: @Sendable () async -> Void

    /// Opens `location`. For the embedded storage, `command` names this program in the
    /// folder's lock (what another process is told holds it) and `note` hears how the folder
    /// was reached.
    /// With `shard`, the session's run plans, carries out, verifies, resets and exports only
    /// that shard's part (``Shard``).
    /// `configuration` is the clients' (its request log and activity counts among them).
    /// `lockTimeout`: how long to wait for another process that owns the embedded folder.
    public static func open(
        _ location: RunTarget.Location, command: String, shard: Shard? = nil, configuration: ClientConfiguration = ClientConfiguration(),
        lockTimeout: Duration = .zero, note: (String) -> Void = { _ in }
    ) async throws -> StorageSession {
        switch location {
        case .account(let account):
            let target = PlanTarget(account)
            return StorageSession(
                run: SeedRun(account: account, target: target, configuration: configuration, shard: shard), servesHere: false,
                servedBy: nil, stop: {})
        case .embedded(let directory, let provider):
            let connection = try await provider.open(dataDirectory: directory, command: command, lockTimeout: lockTimeout)
            let canonical = StorageAccount.development()
            let target = PlanTarget(canonical, embeddedDataDirectory: directory)
            if let owner = connection.servedBy {
                note("through the 'azseed emulator' that serves it (pid \(owner.pid), \(owner.blobEndpoint.absoluteString))")
            }
            return StorageSession(
                run: SeedRun(account: connection.account, target: target, configuration: configuration, shard: shard),
                servesHere: connection.servedBy == nil, servedBy: connection.servedBy, stop: connection.close)
        }
    }

    /// Stops serving the embedded folder, if this session serves it.
    public func close() async { await stop() }

    /// Opens `location`, runs `body`, then closes the session whether or not it threw.
    public static func with<T>(
        _ location: RunTarget.Location, command: String, shard: Shard? = nil, configuration: ClientConfiguration = ClientConfiguration(),
        lockTimeout: Duration = .zero, note: (String) -> Void = { _ in }, _ body: (StorageSession) async throws -> T
    ) async throws -> T {
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
    public var servingNote: Phrase? {
        guard let directory = run.target.embeddedDataDirectory else { return nil }
        if let owner = servedBy {
            return
                "the data lives in \(directory), served by 'azseed emulator' (pid \(owner.pid)) at blob \(owner.blobEndpoint.absoluteString), table \(owner.tableEndpoint.absoluteString)"
        }
        return
            "the data lives in \(directory); serve it to the app or Storage Explorer with '\(Setting.emulatorCommand)\(directory.hasSuffix(".azseed/storage") ? "" : " \(Setting.dataFolder) \(directory)" as Phrase)' (blob \(run.target.blobEndpoint), table \(run.target.tableEndpoint), connection string UseDevelopmentStorage=true)"
    }

    /// Observes the target and plans the way to a generated dataset; `digests` as in
    /// ``Planner``. `onRead` hears the number of entities read so far.
    /// `migrations`: those the target has had, run over the dataset's desired state before it
    /// is compared (``DesiredStorage/migrated(by:)``).
    public func plan(
        _ desired: GeneratedDataset, counts: [String: Int], access: PublicAccess?, prune: Bool, digests: Bool, migrations: [Migration] = [],
        onRead: (@Sendable (Int) -> Void)? = nil
    ) async throws -> Plan {
        try await plan(
            desired, counts: counts, access: access, prune: prune, digests: digests, migrations: migrations, retention: .whole, onRead: onRead
        ).plan
    }

    /// The same, held as `retention` says, with the desired state it compared (the dataset as
    /// the migrations leave it): what a plan that counted actions is carried out from
    /// (``SeedRun/execute(_:remaking:concurrency:onProgress:)``).
    public func plan(
        _ desired: GeneratedDataset, counts: [String: Int], access: PublicAccess?, prune: Bool, digests: Bool, migrations: [Migration] = [],
        retention: PlanRetention, onRead: (@Sendable (Int) -> Void)? = nil
    ) async throws -> (plan: Plan, desired: DesiredStorage) {
        let header = run.header(for: desired, counts: counts, access: access, prune: prune)
        let prepared = try await LookupLoader.prepared(migrations, outside: desired.storage, tables: run.tables)
        let storage = desired.storage.migrated(by: prepared)
        return (try await run.plan(storage, header: header, digests: digests, retention: retention, onRead: onRead), storage)
    }
}
