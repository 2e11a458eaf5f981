import AzseedTestSupport
import AzureStorage
import Foundation
import PropertyBased
import SeedKit
import SeedRunner
import StorageEmulator
import Synchronization
import Testing

/// Two migrate runs and someone breaking the lock between them, as the attacker of issue 45
/// did: a run whose lock was broken must stop before its next write, and the run that takes
/// over resumes exactly, so a step that is not idempotent (x → xx) is applied to each entity
/// exactly once.
@Suite struct MigrationFencingTests {
    static let double = "description: x to xx\noperations:\n  - replace-in-property: {table: events, name: Place, find: x, replace: xx}\n"

    /// What the runners were told when they stopped.
    final class Refusals: Sendable {
        let said = Mutex<[String]>([])
        var all: [String] { said.withLock { $0 } }
    }

    /// Runs `work` until it returns, as a scheduler that retries would; every refusal it meets
    /// on the way is kept (a lost lock, another run holding it).
    static func untilDone<T: Sendable>(_ refusals: Refusals, _ work: @Sendable () async throws -> T) async throws -> T {
        for _ in 0..<40 {
            do {
                return try await work()
            } catch let error as RunError {
                refusals.said.withLock { $0.append(error.phrase.description) }
            }
        }
        return try await work()
    }

    /// `count` entities with Place "x" in four partitions, and a migrator of x -> xx that waits
    /// up to a minute for the lock.
    static func seeded(_ server: EmulatorServer, count: Int) async throws -> (TableClient, Migrator) {
        let tables = TableClient(account: server.account)
        try await MigratorTests.seed(tables, count: count, partitions: 4)
        var migrator = Migrator(
            target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(["V1__double.yaml": Self.double]))
        migrator.target.lockTimeout = .seconds(60)
        return (tables, migrator)
    }

    /// Breaks the account's migrate lock `times` times, `gaps` milliseconds apart.
    static func breaker(_ migrator: Migrator, gaps: [Int]) -> Task<Int, any Error> {
        Task {
            var broke = 0
            for gap in gaps {
                try await Task.sleep(for: .milliseconds(gap))
                if try await migrator.breakLock() { broke += 1 }
            }
            return broke
        }
    }

    @Test func twoRunnersAndRandomLockBreaksApplyEachEntityExactlyOnce() async throws {
        await propertyCheck(count: 4, input: Gen.uint64()) { seed in
            try await TestEmulator.withRunning { server in
                let (tables, migrator) = try await Self.seeded(server, count: 2_000)
                var random = SeedRandom(seed: seed)
                let gaps = (0..<4).map { _ in 20 + Int(random.below(150)) }
                let refusals = Refusals()
                let runner = migrator
                async let first = Self.untilDone(refusals) { try await runner.apply() }
                async let second = Self.untilDone(refusals) { try await runner.apply() }
                let breaks = Self.breaker(migrator, gaps: gaps)
                _ = try await (first, second)
                let broke = try await breaks.value
                _ = try await migrator.apply()

                let after = try await MigratorTests.all(tables)
                let wrong = after.filter { $0["Place"] != .string("xx") }
                #expect(
                    after.count == 2_000 && wrong.isEmpty,
                    "seed \(seed), \(broke) breaks: \(wrong.count) entities not transformed exactly once, e.g. \(wrong.prefix(3).map { "\($0.rowKey)=\(String(describing: $0["Place"]))" })"
                )
                let status = try await migrator.status()
                #expect(status.entries[0].state == .applied && status.entries[0].record?.counts == [2_000], "seed \(seed)")
                let said = refusals.all
                #expect(
                    said.allSatisfy { $0.contains("migrate lock") },
                    "seed \(seed): a run stopped for another reason: \(said.filter { !$0.contains("migrate lock") }.prefix(2))")
            }
        }
    }

    @Test func twoUndoRunsAndRandomLockBreaksPutEachEntityBackExactlyOnce() async throws {
        await propertyCheck(count: 3, input: Gen.uint64()) { seed in
            try await TestEmulator.withRunning { server in
                let (tables, migrator) = try await Self.seeded(server, count: 1_500)
                _ = try await migrator.apply()
                var random = SeedRandom(seed: seed)
                let gaps = (0..<3).map { _ in 20 + Int(random.below(120)) }
                let refusals = Refusals()
                let runner = migrator
                let version = MigrationVersion("1")!
                let undo: @Sendable () async throws -> [MigrationReport] = {
                    do {
                        return try await runner.undo(to: version)
                    } catch let error as RunError where error.phrase.description.contains("not applied (undone)") {
                        return []  // the other run finished it
                    }
                }
                async let first = Self.untilDone(refusals, undo)
                async let second = Self.untilDone(refusals, undo)
                let breaks = Self.breaker(migrator, gaps: gaps)
                _ = try await (first, second)
                _ = try await breaks.value

                let after = try await MigratorTests.all(tables)
                #expect(after.count == 1_500 && after.allSatisfy { $0["Place"] == .string("x") }, "seed \(seed)")
                #expect(try await migrator.status().entries[0].state == .undone, "seed \(seed)")
                let said = refusals.all
                #expect(said.allSatisfy { $0.contains("migrate lock") }, "seed \(seed): \(said.filter { !$0.contains("migrate lock") }.prefix(2))")
            }
        }
    }
}
