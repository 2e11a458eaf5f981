import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import Synchronization
import Testing

/// Every write path beside a second client that writes the same entities and blobs between
/// the plan and its writes (issue 45): apply, reset, import and copy each stop in one line
/// rather than replace or delete what the other client wrote, nothing of ours is doubled, and
/// the next run — planned on what is there now — converges. (Migrate apply and undo have
/// theirs in MigrationFencingTests and MigrationBlobConflictTests.)
@Suite struct SecondActorTests {
    /// Writes, as another client would, onto what the plan is about to write: the first
    /// entity it updates, creates and deletes, the first blob it creates, updates and deletes.
    final class SecondActor: RunObserver {
        let tables: TableClient
        let blobs: BlobClient
        /// What it wrote: entities by table/PartitionKey/RowKey, blobs by container/name.
        let entities = Mutex<[(String, String, String)]>([])
        let written = Mutex<[(String, String)]>([])

        /// Which it writes: blob writes stop a run before its first entity is written, so each
        /// path is met on its own.
        let writesEntities: Bool
        let writesBlobs: Bool

        init(_ account: StorageAccount, entities: Bool = true, blobs: Bool = false) {
            tables = TableClient(account: account)
            self.blobs = BlobClient(account: account)
            writesEntities = entities
            writesBlobs = blobs
        }

        func planned(_ plan: Plan) async throws {
            if writesEntities { try await writeEntities(plan) }
            if writesBlobs { try await writeBlobs(plan) }
        }

        func writeEntities(_ plan: Plan) async throws {
            for change in [PlanChange.update, .create] {
                guard let action = plan.entities.first(where: { $0.change == change }) else { continue }
                let theirs = TableEntity(partitionKey: action.partitionKey, rowKey: action.rowKey, properties: ["App": .string("theirs")])
                _ = try await tables.upsert(theirs, into: action.table)
                entities.withLock { $0.append((action.table, action.partitionKey, action.rowKey)) }
            }
            if let action = plan.entityDeletes.first {
                let theirs = TableEntity(partitionKey: action.partitionKey, rowKey: action.rowKey, properties: ["App": .string("theirs")])
                _ = try await tables.upsert(theirs, into: action.table)
                entities.withLock { $0.append((action.table, action.partitionKey, action.rowKey)) }
            }
        }

        func writeBlobs(_ plan: Plan) async throws {
            for change in [PlanChange.create, .update, .delete] {
                guard let action = plan.blobs.first(where: { $0.change == change }) else { continue }
                try await blobs.putBlob(Data("theirs".utf8), container: action.container, name: action.name)
                written.withLock { $0.append((action.container, action.name)) }
            }
        }

        /// Whether everything it wrote is still as it wrote it.
        func intact() async throws -> [String] {
            var lost: [String] = []
            for (table, partitionKey, rowKey) in entities.withLock({ $0 }) {
                let there = try await tables.get(partitionKey: partitionKey, rowKey: rowKey, from: table)
                if there?.entity["App"] != .string("theirs") { lost.append("entity \(table)/\(partitionKey)/\(rowKey)") }
            }
            for (container, name) in written.withLock({ $0 }) {
                let there = try? await blobs.download(container: container, name: name)
                if there != Data("theirs".utf8) { lost.append("blob \(container)/\(name)") }
            }
            return lost
        }

        var count: Int { entities.withLock { $0.count } + written.withLock { $0.count } }
    }

    /// Changes a seeded target so that the next run updates, creates and deletes entities and
    /// creates and updates blobs: an event edited, one deleted, one the dataset does not hold
    /// (pruned), a photo deleted and one overwritten.
    static func drift(_ account: StorageAccount) async throws {
        let tables = TableClient(account: account)
        let blobs = BlobClient(account: account)
        var events: [QueriedEntity] = []
        for try await page in tables.query("events", fullMetadata: true) { events += page }
        var edited = events[events.count - 1].entity
        edited["Title"] = .string("edited")
        _ = try await tables.upsert(edited, into: "events")
        try await tables.deleteEntity(
            partitionKey: events[events.count - 2].entity.partitionKey, rowKey: events[events.count - 2].entity.rowKey, from: "events")
        _ = try await tables.insert(
            TableEntity(partitionKey: events[0].entity.partitionKey, rowKey: "zzzz-extra", properties: ["X": .int32(1)]), into: "events")
        var names: [String] = []
        for try await page in blobs.list(container: "speakers") { names += page.map(\.name) }
        try await blobs.deleteBlob(container: "speakers", name: names[0])
        try await blobs.putBlob(Data("other photo".utf8), container: "speakers", name: names[1])
        try await blobs.putBlob(Data("extra".utf8), container: "speakers", name: "zzzz-extra.txt")
    }

    static func expectStoppedKeepingTheirs(_ actor: SecondActor, writes: Int = 3, _ run: () async throws -> Void) async throws {
        await #expect {
            try await run()
        } throws: { error in
            ((error as? RunError)?.phrase.description ?? "").contains("was written by someone else after the plan read it")
        }
        #expect(actor.count >= writes, "the second client found too little to write (\(actor.count))")
        let lost = try await actor.intact()
        #expect(lost.isEmpty, "lost: \(lost)")
    }

    @Test func applyKeepsWhatAnotherClientWroteAndConvergesOnTheNextRun() async throws {
        try await TestEmulator.withRunning { server in
            let target = RunTarget(location: .account(server.account))
            _ = try await Seeder(target: target).apply(UseCaseTests.request, prune: false, concurrency: 8)
            for (entities, blobs) in [(true, false), (false, true)] {
                try await Self.drift(server.account)
                let actor = SecondActor(server.account, entities: entities, blobs: blobs)
                try await Self.expectStoppedKeepingTheirs(actor) {
                    _ = try await Seeder(target: target, observer: actor).apply(UseCaseTests.request, prune: true, concurrency: 8)
                }
                _ = try await Seeder(target: target).apply(UseCaseTests.request, prune: true, concurrency: 8)
            }
            _ = try await Seeder(target: target).apply(UseCaseTests.request, prune: true, concurrency: 8)
            let after = try await Seeder(target: target).verify(UseCaseTests.request, digests: false)
            #expect(after.plan.isEmpty)
            var count = 0
            for try await page in TableClient(account: server.account).query("events") { count += page.count }
            #expect(count == 8 + 12, "an entity was doubled or lost")
        }
    }

    @Test func resetDeletesNothingAnotherClientWroteSinceThePlan() async throws {
        try await TestEmulator.withRunning { server in
            let target = RunTarget(location: .account(server.account))
            _ = try await Seeder(target: target).apply(UseCaseTests.request, prune: false, concurrency: 8)
            // Blobs first: a reset deletes them before the entities.
            for (entities, blobs) in [(false, true), (true, false)] {
                let actor = SecondActor(server.account, entities: entities, blobs: blobs)
                try await Self.expectStoppedKeepingTheirs(actor, writes: 1) {
                    _ = try await Seeder(target: target, observer: actor).reset(UseCaseTests.request, dryRun: false, concurrency: 8)
                }
            }
        }
    }

    @Test func importAndCopyKeepWhatAnotherClientWrote() async throws {
        try await UseCaseTests.withSeededPair { source, target in
            let account = try #require(target.account)
            let sourceAccount = try #require(source.account)
            _ = try await copyAccount(
                from: sourceAccount, containers: ["speakers"], tables: ["events"], to: target, prune: false, dryRun: false, concurrency: 8,
                digests: false)
            try await Self.drift(account)
            let copying = SecondActor(account, entities: true, blobs: true)
            try await Self.expectStoppedKeepingTheirs(copying) {
                _ = try await copyAccount(
                    from: sourceAccount, containers: ["speakers"], tables: ["events"], to: target, prune: true, dryRun: false, concurrency: 8,
                    digests: false, observer: copying)
            }

            let folder = try Scratch.folder("second-actor-import")
            _ = try await exportSnapshot(
                ExportRequest(
                    containers: ["speakers"], tables: ["events"], dataset: nil, storageFolder: folder.appendingPathComponent("storage"),
                    out: folder.appendingPathComponent("snapshot"), force: false), from: source)
            _ = try await importSnapshot(
                try await readSnapshot(folder.appendingPathComponent("snapshot"), for: target), into: target, prune: true, dryRun: false,
                concurrency: 8, digests: false)
            try await Self.drift(account)
            let importing = SecondActor(account, entities: true, blobs: true)
            try await Self.expectStoppedKeepingTheirs(importing) {
                _ = try await importSnapshot(
                    try await readSnapshot(folder.appendingPathComponent("snapshot"), for: target), into: target, prune: true, dryRun: false,
                    concurrency: 8, digests: false, observer: importing)
            }
        }
    }
}
