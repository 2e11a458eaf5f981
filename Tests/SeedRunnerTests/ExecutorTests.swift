import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import StorageEmulator
import Synchronization
import Testing

@testable import SeedRunner

/// The executor against the emulator over sockets, and against scripted answers for what
/// the emulator cannot produce.
@Suite struct ExecutorTests {
    static let speakeasy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Seeds/speakeasy")

    static func desired(events: Int = 30, blobEndpoint: String = GenerationOptions.developmentBlobEndpoint) throws -> GeneratedDataset {
        try GeneratedDataset.make(
            try Dataset.load(directory: speakeasy),
            options: GenerationOptions(counts: ["event": events], now: EdmDateTime(iso8601: "2026-11-21")!, blobEndpoint: blobEndpoint))
    }

    static func run(
        _ server: EmulatorServer, configuration: ClientConfiguration = ClientConfiguration(),
        transport: any HTTPTransport = CurlTransport()
    ) -> SeedRun {
        let account = server.account
        return SeedRun(
            account: account,
            target: PlanTarget(
                account: account.name, blobEndpoint: account.blobEndpoint.absoluteString,
                tableEndpoint: account.tableEndpoint.absoluteString),
            transport: transport, configuration: configuration)
    }

    @Test func applyThenReplanIsEmpty() async throws {
        try await TestEmulator.withRunning { server in
            let run = Self.run(server)
            let desired = try Self.desired()
            let header = run.header(for: desired, counts: [:], access: nil, prune: false)
            let plan = try await run.plan(desired.storage, header: header)
            let progress = Mutex<[Int]>([])
            let report = try await run.execute(plan, concurrency: 4) { p in progress.withLock { $0.append(p.done) } }
            #expect(report.created == 1 + 8 + 1 + 8 + 30)
            #expect(progress.withLock { $0.max() } == 8 + 38)
            let again = try await run.plan(desired.storage, header: header)
            #expect(again.isEmpty)
        }
    }

    /// A create whose entity appeared since the plan holding exactly what the run writes (as a
    /// retried insert that had been applied leaves it) is done; one holding anything else is
    /// another client's, kept as they wrote it, and the run stops (issue 45: it was once
    /// replaced by an upsert). A delete that finds nothing is done.
    @Test func conflictsFromEarlierAttemptsAreReconciled() async throws {
        try await TestEmulator.withRunning { server in
            let run = Self.run(server)
            let desired = try Self.desired()
            let header = run.header(for: desired, counts: [:], access: nil, prune: false)
            let plan = try await run.plan(desired.storage, header: header)
            let target = try #require(plan.entities.last?.entity)
            try await run.tables.createTable("events")
            try await run.tables.insert(
                TableEntity(partitionKey: target.partitionKey, rowKey: target.rowKey, properties: ["EventName": .string("stale")]), into: "events")
            await #expect {
                _ = try await run.execute(plan, concurrency: 2)
            } throws: { error in
                ((error as? RunError)?.phrase.description ?? "").contains("was written by someone else after the plan read it")
            }
            let theirs = try #require(try await run.tables.get(partitionKey: target.partitionKey, rowKey: target.rowKey, from: "events"))
            #expect(theirs.entity["EventName"] == .string("stale"), "another client's entity was replaced")

            _ = try await run.tables.upsert(target, into: "events")  // what a retried insert leaves
            let report = try await run.execute(plan, concurrency: 2)
            #expect(report.created == plan.summary.create)
            let stored = try #require(try await run.tables.get(partitionKey: target.partitionKey, rowKey: target.rowKey, from: "events"))
            #expect(stored.entity == target)

            var deletes = plan
            deletes.containers = []
            deletes.blobs = []
            deletes.tables = []
            deletes.entities = []
            deletes.entityDeletes = [
                EntityAction(
                    table: "events", kind: nil, partitionKey: "Events", rowKey: "never-there", change: .delete,
                    changes: [], entity: nil, desiredRowKey: nil, naturalKey: [])
            ]
            try await run.tables.insert(TableEntity(partitionKey: "Events", rowKey: "still-there"), into: "events")
            deletes.entityDeletes.append(EntityAction(table: "events", kind: nil, partitionKey: "Events", rowKey: "still-there", change: .delete))
            let deleted = try await run.execute(deletes, concurrency: 1)
            // The missing entity's delete is dropped from its batch; the other is carried out.
            #expect(deleted.deleted == 2)
            #expect(try await run.tables.get(partitionKey: "Events", rowKey: "still-there", from: "events") == nil)
            #expect(try await run.tables.get(partitionKey: target.partitionKey, rowKey: target.rowKey, from: "events") != nil)
        }
    }

    /// Injected faults (ServerBusy, timeouts after applying, dropped connections) are retried
    /// and reconciled: the target ends exactly as planned.
    @Test func applyConvergesThroughInjectedFaults() async throws {
        try await TestEmulator.withRunning(faultRate: 0.1, faultSeed: 5) { server in
            let configuration = ClientConfiguration(retry: RetryPolicy(maxRetries: 10, initialDelay: .milliseconds(5), maxDelay: .milliseconds(50)))
            // Counts the faults that reached the client, so the test shows it was tested.
            let faults = Mutex(0)
            let network = CurlTransport(timeout: 2)
            let counting = ClosureTransport { request in
                do {
                    let response = try await network.send(request)
                    if response.status >= 500 { faults.withLock { $0 += 1 } }
                    return response
                } catch {
                    faults.withLock { $0 += 1 }
                    throw error
                }
            }
            let run = Self.run(server, configuration: configuration, transport: counting)
            let desired = try Self.desired(events: 300)
            let header = run.header(for: desired, counts: [:], access: nil, prune: true)
            let plan = try await run.plan(desired.storage, header: header)
            _ = try await run.execute(plan, concurrency: 4)
            let after = try await run.plan(desired.storage, header: header)
            #expect(after.isEmpty, "\(after.summary)")
            #expect(faults.withLock { $0 } > 0)
        }
    }

    /// An account that forbids public access stops the run at the container, before any
    /// blob or entity is written, with the way out.
    @Test func publicAccessNotPermittedStopsBeforeAnythingElse() async throws {
        let sent = Mutex<[String]>([])
        let transport = ClosureTransport { request in
            sent.withLock { $0.append("\(request.method) \(request.path)") }
            let body = Data(
                "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>PublicAccessNotPermitted</Code><Message>Public access is not permitted on this storage account.</Message></Error>"
                    .utf8)
            return TransportResponse(status: 409, headers: HeaderFields([("x-ms-error-code", "PublicAccessNotPermitted")]), body: body)
        }
        let account = StorageAccount.development()
        let run = SeedRun(account: account, target: PlanTarget(account: account.name, blobEndpoint: "b", tableEndpoint: "t"), transport: transport)
        let desired = try Self.desired()
        let plan = try await Planner.plan(
            desired: desired.storage, observed: ObservedState(), header: run.header(for: desired, counts: [:], access: nil, prune: false))
        await #expect {
            _ = try await run.execute(plan, concurrency: 4)
        } throws: { error in
            // The library names the remedy as a setting; the CLI spells it "--access private".
            let text = "\(error)"
            return text.contains("PublicAccessNotPermitted") && (error as? RunError)?.phrase.settings == [.privateAccess]
                && text.contains("nothing else was written") && !text.contains("--")
        }
        #expect(sent.withLock { $0 } == ["PUT /devstoreaccount1/speakers"])
    }

    @Test func batchesKeepToOnePartitionAHundredOperationsAndTheBodyLimit() {
        let big = String(repeating: "x", count: 30_000)
        var actions: [EntityAction] = []
        for i in 0..<250 {
            let entity = TableEntity(partitionKey: i < 230 ? "a" : "b", rowKey: "r\(i)", properties: ["Text": .string(i < 200 ? "small" : big)])
            actions.append(
                EntityAction(
                    table: "t", kind: "k", partitionKey: entity.partitionKey, rowKey: entity.rowKey, change: .create,
                    changes: [], entity: entity, desiredRowKey: nil, naturalKey: []))
        }
        let batches = EntityBatches.make(actions)
        #expect(batches.map(\.count) == [100, 100, 30, 20])
        for batch in batches {
            #expect(Set(batch.map(\.partitionKey)).count == 1)
            let tableURL = "http://127.0.0.1:10002/devstoreaccount1/t"
            #expect(TableBatchCodec.encode(batch, tableURL: tableURL).body.count <= TableBatchCodec.maxBodyBytes)
        }
    }
}
