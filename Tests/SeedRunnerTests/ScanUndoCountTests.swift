import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import StorageEmulator
import Synchronization
import Testing

/// A step with no `where:` counts what undo could not tell apart during its own scan, instead
/// of reading the whole table once more before its first write; the count stays exact when the
/// run is stopped anywhere and resumed.
@Suite struct ScanUndoCountTests {
    /// The phases a migration's progress went through, and the most entities one of them read.
    final class Phases: RunObserver {
        private let seen = Mutex<[(MigrationProgress.Phase, Int)]>([])
        func event(_ event: RunEvent) {
            guard case .migrationProgress(let progress) = event else { return }
            seen.withLock { $0.append((progress.phase, progress.read)) }
        }
        func read(in phase: MigrationProgress.Phase) -> Int { seen.withLock { $0.filter { $0.0 == phase }.map(\.1).max() ?? 0 } }
    }

    struct Kill: Error {}

    /// A hook that stops the run at its `n`th save of the ledger, as a kill -9 leaves it: the
    /// batches already sent are written (it waits for them), the save is not.
    static func killed(atSave n: Int) -> @Sendable () async throws -> Void {
        let saves = Mutex(0)
        return {
            guard
                saves.withLock({
                    $0 += 1
                    return $0
                }) == n
            else { return }
            try await Task.sleep(for: .milliseconds(300))
            throw Kill()
        }
    }

    /// The rename applied to `server`'s events, stopped at its `n`th save of the ledger (the
    /// run left `running`), then applied again to the end.
    static func renameStoppedAndResumed(_ server: EmulatorServer, atSave n: Int) async throws -> Migrator {
        var migrator = Migrator(
            target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(["V1__rename.yaml": Self.rename]))
        migrator.beforeCheckpoint = Self.killed(atSave: n)
        await #expect(throws: Kill.self) { _ = try await migrator.apply() }
        #expect(try await migrator.status().entries[0].state == .running)
        migrator.beforeCheckpoint = nil
        _ = try await migrator.apply()
        return migrator
    }

    static let rename = "description: rename\noperations:\n  - rename-property: {table: events, from: Place, to: Venue}\n"

    /// Entities that already hold `Venue` and no `Place`: undo would rename them back. One in
    /// the first partition read, one in the last.
    static func seedWithConflicts(_ tables: TableClient) async throws {
        try await MigratorTests.seed(tables, count: 6_000, partitions: 5)
        for (partition, row) in [("p0", "000000a"), ("p4", "999999")] {
            _ = try await tables.upsert(TableEntity(partitionKey: partition, rowKey: row, properties: ["Venue": .string("v")]), into: "events")
        }
    }

    /// Before: the table was read whole (phase `checking for undo`) before the first write,
    /// then again by the step. Now the step's scan is the only read.
    @Test func aRenameReadsTheTableOnceAndStillCountsWhatUndoCannotTellApart() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seedWithConflicts(tables)
            let phases = Phases()
            let migrator = Migrator(
                target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(["V1__rename.yaml": Self.rename]),
                observer: phases)
            let report = try await migrator.apply()
            #expect(report.map { $0.operations.map(\.changes) } == [[6_000]])
            #expect(phases.read(in: .checkingForUndo) == 0)
            #expect(phases.read(in: .writing) == 6_002)
            #expect(try await migrator.status().entries[0].record?.undoChecks == [2])
            await #expect(throws: RunError.self) { _ = try await migrator.undo(to: MigrationVersion("1")!) }
        }
    }

    /// Stopped at each of several saves of the ledger (as a kill would stop it), then resumed:
    /// the entities counted before the stop are not counted again (some were renamed since and
    /// now look like conflicts), the ones after it are counted once. The run saves at least
    /// once per page of 1,000 it reads (7 here) before a batch of it is written; the periodic
    /// saves come as the batches' answers do, so a stop past the 7th was there only some runs.
    @Test(arguments: [1, 2, 3, 5, 7])
    func aRunStoppedAnywhereAndResumedCountsEachEntityOnce(stopAt: Int) async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seedWithConflicts(tables)
            let migrator = try await Self.renameStoppedAndResumed(server, atSave: stopAt)
            #expect(try await migrator.status().entries[0].record?.undoChecks == [2])
        }
    }

    /// From an attacker's review: with keys holding characters above U+FFFF beside ones in
    /// U+E000–U+FFFF, a run killed and resumed left thousands of entities unchanged and said it
    /// was applied (the resume filter and the listing ordered them differently). Every entity
    /// is renamed now, and the count is exact.
    @Test func aRunResumedAmongKeysAboveTheBasicPlaneRenamesEveryEntityAndCountsEachOnce() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await tables.createTable("events")
            let prefixes = ["a", "a\u{E000}", "a\u{1F600}", "\u{FF01}z", "\u{10000}"]
            var conflicts = 0
            // One partition, its keys listed as a… (1,000), a\u{E000}… (5,000), a\u{1F600}…,
            // \u{FF01}z…, \u{10000}…: stopped at its fifth save, the run has recorded (at its
            // fourth, the fourth page's first batch) a key of the second group, and UTF-16 order
            // put the whole third group before it.
            func prefix(_ i: Int) -> String {
                switch i {
                case ..<1_000: "a"
                case ..<6_000: "a\u{E000}"
                case ..<8_000: "a\u{1F600}"
                case ..<9_000: "\u{FF01}z"
                default: "\u{10000}"
                }
            }
            var batch: [TableBatchOperation] = []
            for i in 0..<10_000 {
                let conflict = i % 97 == 0
                if conflict { conflicts += 1 }
                let properties: EntityProperties = conflict ? ["Venue": .string("v")] : ["Place": .string("x")]
                batch.append(.insert(TableEntity(partitionKey: "p\u{1F600}", rowKey: prefix(i) + String(format: "%05d", i), properties: properties)))
                if batch.count == 100 {
                    try await tables.submit(batch, to: "events")
                    batch = []
                }
            }
            let migrator = try await Self.renameStoppedAndResumed(server, atSave: 5)
            let after = try await MigratorTests.all(tables)
            #expect(after.count == 10_000 && after.allSatisfy { $0["Place"] == nil && $0["Venue"] != nil })
            #expect(try await migrator.status().entries[0].record?.undoChecks == [conflicts])
        }
    }

    /// From a new user: a text replacement with a `where:` counted each entity that already
    /// held the replacement twice (the read before the first write, then again with its batch):
    /// 7,537 such entities were reported as 15,074. Once each now.
    @Test func aReplacementWithAWhereCountsEachEntityOnce() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await tables.createTable("events")
            var batches: [String: [TableBatchOperation]] = [:]
            for i in 0..<600 {
                let partition = "p\(i % 3)"
                // Every 10th already holds the replacement, and every 10th but 5 holds both texts
                // (changed, undo would not give it back): 20 and 20 in each partition. Undo would
                // change the 80 of them the step selects (p0, p1); the 40 of p2 it leaves (the
                // `where:` is checked on the entity it would put back).
                let url = i % 10 == 0 ? "/photos/\(i).jpg" : i % 10 == 5 ? "/speakers/\(i)/photos/x.jpg" : "/speakers/\(i).jpg"
                batches[partition, default: []].append(
                    .insert(TableEntity(partitionKey: partition, rowKey: String(format: "%04d", i), properties: ["Url": .string(url)])))
            }
            for operations in batches.values {
                for start in stride(from: 0, to: operations.count, by: 100) {
                    try await tables.submit(Array(operations[start..<min(start + 100, operations.count)]), to: "events")
                }
            }
            let file =
                "description: photos\noperations:\n  - replace-in-property: {table: events, where: \"PartitionKey ne 'p2'\", name: Url, find: /speakers/, replace: /photos/}\n"
            let migrator = Migrator(
                target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(["V1__photos.yaml": file]))
            #expect(try await migrator.apply().map { $0.operations.map(\.changes) } == [[360]])
            let counted = try await migrator.status().entries[0].record?.undoChecks
            #expect(counted == [80], "\(String(describing: counted))")
        }
    }

    /// Without the two conflicts, a resumed run's count is 0 and undo puts every entity back.
    @Test func aResumedRunWithNothingInTheWayIsUndoneExactly() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await MigratorTests.seed(tables, count: 6_000, partitions: 5)
            let before = try await MigratorTests.all(tables).map { $0.properties }
            let migrator = try await Self.renameStoppedAndResumed(server, atSave: 3)
            #expect(try await migrator.status().entries[0].record?.undoChecks == [0])
            _ = try await migrator.undo(to: MigrationVersion("1")!)
            #expect(try await MigratorTests.all(tables).map { $0.properties } == before)
        }
    }

    /// A step with a `where:` reads only what it selects: its count is still a read of the
    /// whole table before the first write.
    @Test func aStepWithAWhereStillChecksBeforeItsFirstWrite() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seedWithConflicts(tables)
            let file =
                "description: rename\noperations:\n  - rename-property: {table: events, where: \"PartitionKey ne 'p2'\", from: Place, to: Venue}\n"
            let phases = Phases()
            let migrator = Migrator(
                target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(["V1__rename.yaml": file]), observer: phases)
            _ = try await migrator.apply()
            #expect(phases.read(in: .checkingForUndo) == 6_002)
            #expect(try await migrator.status().entries[0].record?.undoChecks == [2])
        }
    }
}
