import AzseedTestSupport
import AzureStorage
import EmbeddedEmulator
import Foundation
import SeedKit
import StorageEmulator
import Synchronization
import Testing

@testable import SeedRunner

/// Migrations written in Swift (issue 49, item 6) run under the files' rules: planned, applied
/// one batch at a time when not idempotent, resumed exactly after a stop, undone exactly by
/// their inverse, their revision in the ledger's checksum, their version their own.
@Suite(.serialized) struct EntityMigrationTests {
    /// `x` becomes `x!` — not idempotent (applied twice it would be `x!!`) — and back.
    struct Exclaim: EntityMigration {
        var revision = "1"
        let version = MigrationVersion("3")!
        let description = "Places exclaimed"
        let table = "events"
        var filter: String? { "PartitionKey ne 'p2'" }
        func transform(_ entity: TableEntity) -> EntityTransform {
            guard case .string(let place)? = entity["Place"] else { return .keep }
            var changed = entity
            changed["Place"] = .string(place + "!")
            return .replace(changed)
        }
        var inverse: (@Sendable (TableEntity) -> TableEntity?)? {
            { entity in
                guard case .string(let place)? = entity["Place"], place.hasSuffix("!") else { return nil }
                var back = entity
                back["Place"] = .string(String(place.dropLast()))
                return back
            }
        }
    }

    /// A transform that moves an entity to other keys: refused, the entity named.
    struct Rekeys: EntityMigration {
        let version = MigrationVersion("5")!
        let description = "moves"
        let revision = "1"
        let table = "events"
        func transform(_ entity: TableEntity) -> EntityTransform {
            var moved = entity
            moved.rowKey += "x"
            return .replace(moved)
        }
    }

    static func places(_ tables: TableClient) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for try await page in tables.query("events") {
            for e in page { if case .string(let v)? = e.entity["Place"] { counts[v, default: 0] += 1 } }
        }
        return counts
    }

    @Test func aSwiftMigrationIsPlannedAppliedResumedAndUndoneExactly() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await MigratorTests.seed(tables, count: 600, partitions: 3)
            var migrator = Migrator(
                target: RunTarget(location: .account(server.account)),
                folder: try MigratorTests.folder([
                    "V1__capacity.yaml":
                        "description: capacity\noperations:\n  - set-property: {table: events, name: Capacity, value: 100, if-missing: true}\n"
                ]))
            migrator.code = [Exclaim()]
            let (_, plan) = try await migrator.plan()
            #expect(plan.map(\.version) == ["1", "3"] && plan[1].operations.map(\.changes) == [400])
            // Stopped at the fourth checkpoint (inside V3: a batch recorded, not yet sent): resumed exactly.
            struct Kill: Error {}
            let checkpoints = Mutex(0)
            migrator.beforeCheckpoint = {
                if checkpoints.withLock({
                    $0 += 1
                    return $0
                }) == 4 {
                    throw Kill()
                }
            }
            await #expect(throws: Kill.self) { _ = try await migrator.apply() }
            let stopped = try await Self.places(tables)
            #expect(stopped["x!", default: 0] > 0 && stopped["x!", default: 0] < 400, "not stopped inside V3: \(stopped)")
            migrator.beforeCheckpoint = nil
            _ = try await migrator.apply()
            #expect(try await Self.places(tables) == ["x!": 400, "x": 200])
            let status = try await migrator.status()
            #expect(status.entries.map(\.state) == [.applied, .applied] && status.entries[1].record?.script == "V3__Places_exclaimed.swift")
            // Its code changed without a new revision is fine; a new revision is a changed checksum.
            var changed = migrator
            changed.code = [Exclaim(revision: "2")]
            #expect(try await changed.status().entries[1].state == .checksumChanged)
            _ = try await migrator.undo(to: MigrationVersion("3")!)
            #expect(try await Self.places(tables) == ["x": 600])
        }
    }

    @Test func aVersionIsOneMigrationsAndKeysAreNotCodes() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await MigratorTests.seed(tables, count: 30, partitions: 1)
            var migrator = Migrator(
                target: RunTarget(location: .account(server.account)),
                folder: try MigratorTests.folder(["V3__other.yaml": MigratorTests.files["V1__rename.yaml"]!]))
            migrator.code = [Exclaim()]
            let clash = await #expect(throws: RunError.self) { _ = try await migrator.load() }
            #expect(clash.map { "\($0)".contains("is both V3__other.yaml and a migration in Swift") } == true)
            migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: URL(fileURLWithPath: "/nonexistent-migrations"))
            migrator.code = [Rekeys()]
            let refused = await #expect(throws: RunError.self) { _ = try await migrator.apply() }
            #expect(refused.map { "\($0)".contains("a migration in code changes properties, not keys") } == true)
            #expect(try await Self.places(tables) == ["x": 30])
        }
    }
}
