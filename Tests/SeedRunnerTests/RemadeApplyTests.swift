import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import Synchronization
import Testing

/// A large apply holds only what its printed plan lists and plans its entities again as it
/// writes them (``PlanRetention``, issue 51's flat memory). Against a running emulator, with a
/// budget small enough that SpeakEasy's 20 entities cross it: the target ends as a whole
/// apply leaves it, the report counts the same, another client's write between the plan and
/// the writes is kept and stops the run, and faults the service injects are retried through.
@Suite struct RemadeApplyTests {
    static let small = PlanRetention(wholeUpTo: 1, listLimit: 1)

    /// Every entity of the account's `events` table as text, without ETags and timestamps,
    /// and with the account's blob endpoint (in photo URLs) as `BLOB`.
    static func events(_ account: StorageAccount) async throws -> [String] {
        var all: [String] = []
        for try await page in TableClient(account: account).query("events") {
            for item in page {
                let e = item.entity
                all.append(
                    "\(e.partitionKey)/\(e.rowKey) "
                        + e.properties.exactKeys.sorted().filter { $0.string != "Timestamp" }.map { "\($0.string)=\(e[$0.string]!.text)" }.joined(
                            separator: " "))
            }
        }
        let endpoint = account.blobEndpoint.absoluteString
        return all.map { $0.replacingOccurrences(of: endpoint, with: "BLOB") }
    }

    @Test func aRemadeApplyLeavesWhatAWholeApplyLeaves() async throws {
        try await TestEmulator.withRunning { whole in
            try await TestEmulator.withRunning { remade in
                let wholeTarget = RunTarget(location: .account(whole.account))
                let remadeTarget = RunTarget(location: .account(remade.account))
                // A first apply, then one over drift (updates, creates, prune deletes).
                for prune in [false, true] {
                    let a = try await Seeder(target: wholeTarget).apply(UseCaseTests.request, prune: prune, concurrency: 8)
                    let b = try await Seeder(target: remadeTarget).apply(UseCaseTests.request, prune: prune, concurrency: 8, retention: Self.small)
                    #expect(!b.plan.isWhole, "the budget was not crossed: the test would not test the remade path")
                    #expect(a.plan.isWhole)
                    #expect(b.plan.summary == a.plan.summary)
                    #expect(
                        PlanTextRenderer(listLimit: Self.small.listLimit).render(b.plan)
                            == PlanTextRenderer(listLimit: Self.small.listLimit).render(a.plan))
                    // `--output json`'s result counts what the plan counted as it counts what it holds.
                    func result(_ plan: Plan) -> String {
                        var result = RunResult(command: "apply", target: a.plan.header.target, shard: nil, seconds: 0, activity: a.activity)
                        result.plan = plan
                        return result.json().pretty()
                    }
                    #expect(result(b.plan) == result(a.plan))
                    let counts: (ExecutionReport) -> [Int] = { [$0.created, $0.updated, $0.deleted, $0.unchanged, $0.entityOperations] }
                    #expect(counts(b.report) == counts(a.report))
                    #expect(b.report.phases.map(\.name) == a.report.phases.map(\.name))
                    #expect(b.report.phases.map(\.items) == a.report.phases.map(\.items))
                    let (x, y) = (try await Self.events(remade.account), try await Self.events(whole.account))
                    #expect(x == y, "\(x.difference(from: y))")
                    // Past the budget again: events to create again and strays to prune.
                    for account in [whole.account, remade.account] {
                        try await SecondActorTests.drift(account)
                        try await Self.deleteEvents(5, account)
                        for i in 0..<3 {
                            _ = try await TableClient(account: account).insert(
                                TableEntity(partitionKey: "Events", rowKey: "zzzz-stray-\(i)", properties: ["X": .int32(1)]), into: "events")
                        }
                    }
                }
            }
        }
    }

    @Test func anotherClientsWriteBetweenThePlanAndTheWritesIsKept() async throws {
        try await TestEmulator.withRunning { server in
            let target = RunTarget(location: .account(server.account))
            _ = try await Seeder(target: target).apply(UseCaseTests.request, prune: false, concurrency: 8)
            try await SecondActorTests.drift(server.account)
            try await Self.deleteEvents(5, server.account)
            // The plan is printed, then the other client writes where it creates, updates and
            // deletes; the entities are planned again after that, as they are written.
            let actor = SecondActorTests.SecondActor(server.account)
            let remade = Remade(actor)
            try await SecondActorTests.expectStoppedKeepingTheirs(actor) {
                _ = try await Seeder(target: target, observer: remade).apply(UseCaseTests.request, prune: true, concurrency: 8, retention: Self.small)
            }
            #expect(remade.sawCounted, "the plan was held whole: the test would not test the remade path")
            _ = try await Seeder(target: target).apply(UseCaseTests.request, prune: true, concurrency: 8, retention: Self.small)
            let after = try await Seeder(target: target).verify(UseCaseTests.request, digests: false)
            #expect(after.plan.isEmpty)
            #expect(try await Self.events(server.account).count == 8 + 12, "an entity was doubled or lost")
        }
    }

    /// Deletes the first `n` events, so that the next plan creates them again.
    static func deleteEvents(_ n: Int, _ account: StorageAccount) async throws {
        let tables = TableClient(account: account)
        var events: [TableEntity] = []
        for try await page in tables.query("events", filter: .partition("Events")) { events += page.map(\.entity) }
        for event in events.prefix(n) { try await tables.deleteEntity(partitionKey: event.partitionKey, rowKey: event.rowKey, from: "events") }
    }

    /// The second client, and whether the plan it met counted actions it did not hold.
    final class Remade: RunObserver {
        let actor: SecondActorTests.SecondActor
        private let counted = Mutex(false)
        init(_ actor: SecondActorTests.SecondActor) { self.actor = actor }
        var sawCounted: Bool { counted.withLock { $0 } }
        func planned(_ plan: Plan) async throws {
            counted.withLock { $0 = !plan.isWhole }
            try await actor.planned(plan)
        }
    }

    @Test func aNewEntityWhereThePlanSawNoneStopsTheRun() async throws {
        // The plan counted a create of every entity (an empty account); another client makes
        // one of the events before the writes: the remade plan finds it there and stops there.
        final class Creates: RunObserver {
            let account: StorageAccount
            init(_ account: StorageAccount) { self.account = account }
            func planned(_ plan: Plan) async throws {
                let tables = TableClient(account: account)
                try await tables.ensureTable("events")
                // The last event create the plan holds; those after it it only counted.
                let action = try #require(plan.entities.last { $0.kind == "event" && $0.change == .create })
                var theirs = try #require(action.entity)
                theirs["App"] = .string("theirs")
                _ = try await tables.insert(theirs, into: "events")
            }
        }
        try await TestEmulator.withRunning { server in
            let target = RunTarget(location: .account(server.account))
            await #expect {
                _ = try await Seeder(target: target, observer: Creates(server.account)).apply(
                    UseCaseTests.request, prune: false, concurrency: 8, retention: Self.small)
            } throws: { error in
                // The stretch where they wrote: after the last speaker, at the event they made.
                let line = (error as? RunError)?.phrase.description ?? ""
                return line.contains("was written by someone else after the plan read it")
                    && line.contains("an entity after (PartitionKey 'speakers', RowKey ")
                    && line.contains(" and at or before (PartitionKey 'Events', RowKey ")
            }
            let held = try await Self.events(server.account)
            #expect(held.filter { $0.contains("App=theirs") }.count == 1, "theirs was replaced")
            #expect(held.count < 8 + 12, "writes went on past the entity someone else made")
        }
    }

    @Test func faultsAreRetriedThroughARemadeApply() async throws {
        try await TestEmulator.withRunning(faultRate: 0.2) { server in
            let target = RunTarget(location: .account(server.account))
            let applied = try await Seeder(target: target).apply(UseCaseTests.request, prune: false, concurrency: 8, retention: Self.small)
            #expect(!applied.plan.isWhole)
            #expect(applied.report.created == applied.plan.summary.create)
            #expect(try await Self.events(server.account).count == 8 + 12)
        }
    }

    /// A kind copied from a file is read again for the second planning: the file edited
    /// between the plan and the writes (a value, keys unchanged; a broken line) stops the run
    /// at that entity, and what the plan never showed is not written (an attacker's finding).
    @Test func aCopiedKindsFileEditedAfterThePlanIsNotWritten() async throws {
        let folder = try Scratch.folder("remade-copied")
        let entities = folder.appendingPathComponent("entities/readings/1.jsonl")
        try FileManager.default.createDirectory(at: entities.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(
            "name: copied\nseed: 1\ntables:\n  - name: readings\n    kinds:\n      - name: no\n        partition: \"NO\"\n        entities: \"entities/readings/1.jsonl\"\n"
                .utf8
        ).write(to: folder.appendingPathComponent("dataset.yaml"))
        let lines = (0..<30).map { String(format: "{\"PartitionKey\":\"NO\",\"RowKey\":\"%06d\",\"V\":\"orig-\($0)\"}", $0) }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: entities)

        final class Edits: RunObserver {
            let file: URL
            init(_ file: URL) { self.file = file }
            func planned(_ plan: Plan) async throws {
                let text = try String(contentsOf: file, encoding: .utf8)
                try Data(text.replacingOccurrences(of: "\"orig-20\"", with: "\"EDITED-AFTER-PLAN\"").utf8).write(to: file)
            }
        }
        try await TestEmulator.withRunning { server in
            let target = RunTarget(location: .account(server.account))
            let request = DatasetRequest(directory: folder, now: EdmDateTime(iso8601: "2026-11-21")!)
            await #expect {
                _ = try await Seeder(target: target, observer: Edits(entities)).apply(request, prune: false, concurrency: 8, retention: Self.small)
            } throws: { error in
                ((error as? RunError)?.phrase.description ?? "").contains("at or before (PartitionKey 'NO', RowKey '000020')")
            }
            var values: [String] = []
            for try await page in TableClient(account: server.account).query("readings") {
                values += page.compactMap { $0.entity["V"].map(\.text) }
            }
            #expect(!values.contains("EDITED-AFTER-PLAN"), "a value the printed plan never showed was written")
            // Those before it may be written (a batch gathered with it is not sent); none after.
            #expect(values.count <= 20, "entities after the edit were written: \(values.count)")
        }
    }
}
