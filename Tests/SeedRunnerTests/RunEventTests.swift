import AzseedTestSupport
import AzureStorage
import EmbeddedEmulator
import Foundation
import SeedKit
import SeedRunner
import StorageEmulator
import Synchronization
import Testing

/// Lifecycle events as values (``RunEvent``), received by a program's callback as Flyway's
/// callbacks are: phases in order, each migration's start, checkpoints, failure and finish, and
/// a resumed run saying where it resumes.
@Suite(.serialized) struct RunEventTests {
    /// Each event as a short line, in the order the callback heard them.
    final class Heard: Sendable {
        let lines = Mutex<[String]>([])
        let progress = Mutex<[MigrationProgress]>([])
        var handler: RunEventHandler {
            RunEventHandler { event in
                let line: String
                switch event {
                case .migrationProgress(let p):
                    self.progress.withLock { $0.append(p) }
                    return
                case .migrationControlled(let control): line = "controlled \(control.paused ? "paused" : "running")"
                case .phaseBegan(let phase): line = "began \(phase.rawValue)"
                case .phaseEnded(let phase): line = "ended \(phase.rawValue)"
                case .migrationStarted(let m): line = "started \(m.version)\(m.undoing ? " undo" : "")\(m.resumedAt.map { " at \($0)" } ?? "")"
                case .migrationCheckpointed(let m, let operation, let changes): line = "checkpoint \(m.version) \(operation): \(changes)"
                case .migrationFailed(let m, _): line = "failed \(m.version)"
                case .migrationFinished(let report): line = "finished \(report.version) \(report.state)"
                }
                self.lines.withLock { $0.append(line) }
            }
        }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test func aMigrationRunIsStartedCheckpointedAndFinished() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await MigratorTests.seed(tables, count: 300, partitions: 3)
            let heard = Heard()
            let migrator = Migrator(
                target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(MigratorTests.files), observer: heard.handler)
            _ = try await migrator.apply()
            #expect(
                heard.all == [
                    "started 1", "checkpoint 1 1: 200", "finished 1 applied", "started 2", "checkpoint 2 1: 300", "checkpoint 2 2: 10",
                    "finished 2 applied",
                ])
            // Progress (issue 49): each operation's phases in order — V1's rename is invertible,
            // so the table is read for undo first, which counts the step's total on the way (an
            // undo step's total is counted by a keys-only query beside its scan: below). Each
            // ends finished with its changes, everything read of its total.
            let progress = heard.progress.withLock { $0 }
            let first = progress.filter { $0.version == "1" }
            var phases: [MigrationProgress.Phase] = []
            for p in first where phases.last != p.phase { phases.append(p.phase) }
            #expect(phases == [.reading, .checkingForUndo, .reading, .writing, .finished])
            let done = try #require(first.last)
            #expect(done.total == 200 && done.read == 200 && done.changed == 200 && done.percent == 100)
            #expect(first.allSatisfy { $0.operation == 1 && $0.operations == 1 && $0.op == "rename-property" && $0.table == "events" })
            // Never more read than the total, and the percent is of it.
            for p in progress where p.total != nil {
                #expect(p.read <= p.total! && p.percent == Double(p.read) * 100 / Double(max(1, p.total!)) || p.total == 0)
            }
            let second = progress.filter { $0.version == "2" && $0.operation == 1 }
            #expect(second.last?.phase == .finished && second.last?.changed == 300 && second.last?.total == 300)
        }
        // An undo is heard as one: V1 (a rename) put back.
        try await TestEmulator.withRunning { server in
            try await MigratorTests.seed(TableClient(account: server.account), count: 30, partitions: 1)
            let heard = Heard()
            let files = try MigratorTests.folder(["V1__rename.yaml": MigratorTests.files["V1__rename.yaml"]!])
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: files, observer: heard.handler)
            _ = try await migrator.apply()
            _ = try await migrator.undo(to: MigrationVersion("1")!)
            #expect(
                heard.all == ["started 1", "checkpoint 1 1: 30", "finished 1 applied", "started 1 undo", "checkpoint 1 1: 30", "finished 1 undone"])
            let undone = heard.progress.withLock { $0 }.filter(\.undoing)
            #expect(undone.last?.phase == .finished && undone.last?.total == 30 && undone.last?.changed == 30)
            #expect(!undone.contains { $0.phase == .checkingForUndo })
        }
    }

    @Test func aStoppedRunResumesAtItsCheckpointAndAFailureIsHeard() async throws {
        struct Kill: Error {}
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await MigratorTests.seed(tables, count: 300, partitions: 3)
            let heard = Heard()
            // Operations not safe to run twice record a checkpoint before each batch: the stop is made there.
            let two =
                "description: two\noperations:\n  - replace-in-property: {table: events, name: Place, find: x, replace: xy}\n  - replace-in-property: {table: events, name: Place, find: y, replace: yz}\n"
            var migrator = Migrator(
                target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(["V1__two.yaml": two]),
                observer: heard.handler)
            // Stopped once the first operation is recorded: the next run resumes at operation 2.
            migrator.beforeCheckpoint = { if heard.all.contains("checkpoint 1 1: 300") { throw Kill() } }
            await #expect(throws: Kill.self) { _ = try await migrator.apply() }
            #expect(heard.all == ["started 1", "checkpoint 1 1: 300"])
            migrator.beforeCheckpoint = nil
            _ = try await migrator.apply()
            #expect(heard.all[2...] == ["started 1 at 2", "checkpoint 1 2: 300", "finished 1 applied"])
        }
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await MigratorTests.seed(tables, count: 50, partitions: 1)
            _ = try await tables.update(
                TableEntity(partitionKey: "p0", rowKey: "000030", properties: ["Place": .string("x"), "Number": .string("thirty")]), in: "events")
            let retype = "description: Number as Int64\noperations:\n  - retype-property: {table: events, name: Number, to: Int64}\n"
            let heard = Heard()
            let migrator = Migrator(
                target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(["V1__retype.yaml": retype]),
                observer: heard.handler)
            await #expect(throws: RunError.self) { _ = try await migrator.apply() }
            #expect(heard.all == ["started 1", "failed 1"])
        }
    }

    @Test func aSeedingRunPlansThenApplies() async throws {
        let folder = try Scratch.folder("events")
        let target = RunTarget(location: .embedded(dataDirectory: folder.appendingPathComponent("storage"), provider: EmulatorEmbeddedStorage()))
        let heard = Heard()
        let seeder = Seeder(target: target, observer: heard.handler, tool: "RunEventTests")
        let request = DatasetRequest(directory: SeederTests.speakeasy, counts: ["event": 20], now: EdmDateTime(iso8601: "2026-11-21")!)
        _ = try await seeder.apply(request, prune: false, concurrency: 8)
        #expect(heard.all == ["began planning", "ended planning", "began applying", "ended applying"])
        _ = try await seeder.apply(request, prune: false, concurrency: 8)
        #expect(heard.all.count == 6, "nothing to apply the second time: no applying phase")
    }
}
