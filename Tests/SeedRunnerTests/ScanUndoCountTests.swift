import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
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
    /// now look like conflicts), the ones after it are counted once.
    @Test(arguments: [1, 2, 3, 5, 9])
    func aRunStoppedAnywhereAndResumedCountsEachEntityOnce(stopAt: Int) async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seedWithConflicts(tables)
            var migrator = Migrator(
                target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(["V1__rename.yaml": Self.rename]))
            migrator.beforeCheckpoint = Self.killed(atSave: stopAt)
            await #expect(throws: Kill.self) { _ = try await migrator.apply() }
            #expect(try await migrator.status().entries[0].state == .running)
            migrator.beforeCheckpoint = nil
            _ = try await migrator.apply()
            #expect(try await migrator.status().entries[0].record?.undoChecks == [2])
        }
    }

    /// Without the two conflicts, a resumed run's count is 0 and undo puts every entity back.
    @Test func aResumedRunWithNothingInTheWayIsUndoneExactly() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await MigratorTests.seed(tables, count: 6_000, partitions: 5)
            let before = try await MigratorTests.all(tables).map { $0.properties }
            var migrator = Migrator(
                target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(["V1__rename.yaml": Self.rename]))
            migrator.beforeCheckpoint = Self.killed(atSave: 3)
            await #expect(throws: Kill.self) { _ = try await migrator.apply() }
            migrator.beforeCheckpoint = nil
            _ = try await migrator.apply()
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
