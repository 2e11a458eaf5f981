import AzureStorage
import Foundation
import Logging
import SeedKit
import SeedRunner
import StorageEmulator

/// Azure Storage for one test: an emulator in this process, in memory, on free loopback
/// ports, with clients for it — and a dataset seeded into it when the test asks. Every test
/// that calls ``withTestStorage(_:)`` gets its own account, so tests run in parallel without
/// seeing each other's data. Works from Swift Testing and XCTest alike:
///
/// ```swift
/// @Test func findsItsSpeakers() async throws {
///     try await withTestStorage { storage in
///         try await storage.seed(dataset: speakeasyFolder, now: "2026-11-21")
///         var speakers = 0
///         for try await page in storage.tables.query("events", filter: .partition("speakers")) { speakers += page.count }
///         #expect(speakers == 8)
///     }
/// }
/// ```
public struct TestStorage: Sendable {
    /// The account (the development account, at this emulator's endpoints).
    public let account: StorageAccount
    public let blobs: BlobClient
    public let tables: TableClient

    init(account: StorageAccount) {
        self.account = account
        blobs = BlobClient(account: account)
        tables = TableClient(account: account)
    }

    /// A connection string for any Azure SDK or tool (it holds the development account's
    /// well-known key).
    public var connectionString: String { account.connectionString }

    /// Makes the account hold a dataset (the folder with `dataset.yaml`), as `azseed apply`
    /// does: planned, then carried out. `now` is the reference time of a relative window
    /// (ISO 8601), fixed so the data does not depend on the day the test runs; `counts`
    /// overrides kinds' counts. Returns what was written.
    @discardableResult
    public func seed(dataset folder: URL, now: String = "2026-01-01T00:00:00Z", seed: UInt64? = nil, counts: [String: Int] = [:]) async throws
        -> ExecutionReport
    {
        guard let reference = EdmDateTime(iso8601: now) else { throw RunError("seed(now: \(now)): not an ISO 8601 time") }
        // What `azseed apply` does, data only: the ledger is left out of the test's account.
        let seeder = Seeder(target: RunTarget(location: .account(account)))
        let request = DatasetRequest(directory: folder, seed: seed, counts: counts, now: reference)
        let desired = try await seeder.prepare(request)
        return try await StorageSession.with(RunTarget(location: .account(account))) { session in
            let plan = try await session.plan(desired, counts: counts, access: nil, prune: false, digests: false)
            return try await session.run.execute(plan, concurrency: 8)
        }
    }

    /// Seeds a dataset written inline: `yaml` is its `dataset.yaml` (templates and files it
    /// names are not available; generated and listed kinds are).
    @discardableResult
    public func seed(yaml: String, now: String = "2026-01-01T00:00:00Z", seed: UInt64? = nil, counts: [String: Int] = [:]) async throws
        -> ExecutionReport
    {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("azseed-testing-\(UUID().uuidString)")
        try await BlockingPool.run {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(yaml.utf8).write(to: folder.appendingPathComponent("dataset.yaml"))
        }
        do {
            let report = try await self.seed(dataset: folder, now: now, seed: seed, counts: counts)
            try? await BlockingPool.run { try FileManager.default.removeItem(at: folder) }
            return report
        } catch {
            try? await BlockingPool.run { try FileManager.default.removeItem(at: folder) }
            throw error
        }
    }

    /// Empties the account: every container and table is deleted, as a fresh one would be.
    public func reset() async throws {
        for container in try await blobs.listContainers() { try await blobs.deleteContainer(container) }
        for table in try await tables.listTables() { try await tables.deleteTable(table) }
    }
}

/// Runs `body` with its own ``TestStorage``: an in-memory emulator started for it and stopped
/// after, whether or not `body` threw. `logger` hears each request the emulator answers (by
/// default nothing is logged).
public func withTestStorage<T>(logger: Logger? = nil, _ body: (TestStorage) async throws -> T) async throws -> T {
    var configuration = EmulatorConfiguration(dataDirectory: nil, blobPort: 0, tablePort: 0)
    if let logger { configuration.logger = logger }
    return try await EmulatorServer.withRunning(configuration) { server in
        try await body(TestStorage(account: server.account))
    }
}
