import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import StorageEmulator
import Testing

/// `migrate apply --shard I/N`: N runs at once, each on its partitions and blobs with its own
/// lock and record; together they give what one run gives, and the migration counts as
/// applied when the last one finishes.
@Suite struct MigrationShardTests {
    static let files = [
        "V1__venue.yaml":
            "description: Place becomes Venue\noperations:\n  - rename-property: {table: events, where: \"PartitionKey ne 'p2'\", from: Place, to: Venue}\n  - replace-in-property: {table: events, name: Venue, find: x, replace: xx}\n",
        "V2__copy.yaml":
            "description: copy and move\noperations:\n  - copy-table: {from: events, to: archive}\n  - move-blobs: {container: speakers, prefix: \"\", to-container: photos, to-prefix: \"\"}\n",
    ]

    static func seed(_ server: EmulatorServer) async throws {
        try await MigratorTests.seed(TableClient(account: server.account), count: 2_000, partitions: 40)
        let blobs = BlobClient(account: server.account)
        try await blobs.createContainer("speakers")
        for i in 0..<30 { try await blobs.putBlob(Data("\(i)".utf8), container: "speakers", name: "b\(i).jpg") }
    }

    static func picture(_ server: EmulatorServer) async throws -> [String] {
        let tables = TableClient(account: server.account)
        var seen: [String] = []
        let existing = try await tables.listTables()
        for table in ["events", "archive"] where existing.contains(table) {
            for try await page in tables.query(table) {
                seen += page.map { "\(table) \($0.entity.partitionKey) \($0.entity.rowKey) \($0.entity.properties.sorted { $0.key < $1.key })" }
            }
        }
        let blobs = BlobClient(account: server.account)
        let containers = try await blobs.listContainers()
        for container in ["speakers", "photos"] where containers.contains(container) {
            for try await page in blobs.list(container: container) { seen += page.map { "\(container)/\($0.name)" } }
        }
        return seen.sorted()
    }

    @Test func fourShardsAtOnceGiveWhatOneRunGives() async throws {
        let folder = try MigratorTests.folder(Self.files)
        var whole: [String] = []
        var wholeCounts: [[Int]] = []
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: folder)
            _ = try await migrator.apply()
            whole = try await Self.picture(server)
            wholeCounts = try await migrator.status().entries.map { $0.record?.counts ?? [] }
        }
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let shards = (0..<4).map {
                Migrator(target: RunTarget(location: .account(server.account), shard: Shard(index: $0, count: 4)), folder: folder)
            }
            // The shards' plans together count what one run changes.
            var planned = 0
            for shard in shards { planned += try await shard.plan().1.flatMap(\.operations).map(\.changes).reduce(0, +) }
            #expect(planned == wholeCounts.flatMap { $0 }.reduce(0, +))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for shard in shards { group.addTask { _ = try await shard.apply() } }
                try await group.waitForAll()
            }
            #expect(try await Self.picture(server) == whole)
            let status = try await shards[0].status()
            #expect(status.entries.map(\.state) == [.applied, .applied])
            #expect(status.entries.map { $0.record?.counts ?? [] } == wholeCounts)
            // The shards' own records are gone once the migration's is written.
            let ledger = TableClient(account: server.account)
            var left = 0
            for try await page in ledger.query(ReservedNames.ledgerTable, filter: .partition("migration-shard")) { left += page.count }
            #expect(left == 0)
            // V1 can be undone (every shard counted nothing undo could not tell apart).
            #expect(status.entries[0].record?.undoChecks == [0, 0])
        }
    }

    @Test func aMigrationCountsAsAppliedOnlyWhenEveryShardHasFinished() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let folder = try MigratorTests.folder(["V1__venue.yaml": Self.files["V1__venue.yaml"]!])
            let target = RunTarget(location: .account(server.account))
            func shard(_ i: Int, of n: Int) -> Migrator {
                var t = target
                t.shard = Shard(index: i, count: n)
                return Migrator(target: t, folder: folder)
            }
            let whole = Migrator(target: target, folder: folder)
            let first = try await shard(0, of: 2).apply()
            #expect(first.map(\.state) == ["applied by this shard"])
            let status = try await whole.status()
            #expect(status.entries.map(\.state) == [.inShards] && status.entries[0].shards.count == 1)
            // An unsharded run, or a shard of another split, would apply twice: refused, nothing written.
            let before = try await Self.picture(server)
            for other in [whole, shard(1, of: 3)] {
                await #expect(throws: RunError.self) { _ = try await other.apply() }
            }
            #expect(try await Self.picture(server) == before)
            // Shard 0 again has nothing to do; shard 1 finishes the migration.
            #expect(try await shard(0, of: 2).apply().isEmpty)
            #expect(try await shard(1, of: 2).apply().map(\.state) == ["applied"])
            #expect(try await whole.status().entries.map(\.state) == [.applied])
            #expect(try await whole.apply().isEmpty)
            // Applied in shards, undone whole, applied again in shards.
            _ = try await whole.undo(to: MigrationVersion("1")!)
            _ = try await shard(0, of: 2).apply()
            _ = try await shard(1, of: 2).apply()
            #expect(try await whole.status().entries.map(\.state) == [.applied])
        }
    }

    @Test func whatCannotRunInPartsIsRefusedAndAShardLockExcludesAWholeRun() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            var target = RunTarget(location: .account(server.account), shard: Shard(index: 0, count: 2))
            let drop = try MigratorTests.folder([
                "V1__drop.yaml": "description: drop\noperations:\n  - delete-table: {table: events, allow-destructive: true}\n"
            ])
            do {
                _ = try await Migrator(target: target, folder: drop).apply()
                Issue.record("a sharded delete-table ran")
            } catch let error as RunError {
                #expect(error.phrase.description.contains("cannot run in shards"), "\(error.phrase)")
            }
            #expect(try await TableClient(account: server.account).listTables().contains("events"))
            // A shard holding its lock: a whole run is refused (and the other way round).
            let blobs = BlobClient(account: server.account)
            let lock = "migrate.shard-1-of-2.lock"
            try await blobs.putBlob(Data(), container: ReservedNames.ledgerContainer, name: lock)
            let id = try await blobs.acquireLease(container: ReservedNames.ledgerContainer, name: lock, seconds: nil)
            let folder = try MigratorTests.folder(["V1__venue.yaml": Self.files["V1__venue.yaml"]!])
            target.shard = nil
            do {
                _ = try await Migrator(target: target, folder: folder).apply()
                Issue.record("a whole run ran beside a shard")
            } catch let error as RunError {
                #expect(error.phrase.description.contains("a sharded migrate apply holds its lock"), "\(error.phrase)")
            }
            try await blobs.releaseLease(container: ReservedNames.ledgerContainer, name: lock, id: id)
            _ = try await blobs.acquireLease(container: ReservedNames.ledgerContainer, name: "migrate.lock", seconds: nil)
            target.shard = Shard(index: 1, count: 2)
            await #expect(throws: RunError.self) { _ = try await Migrator(target: target, folder: folder).apply() }
            // break-lock ends them all.
            #expect(try await Migrator(target: target, folder: folder).breakLock())
            _ = try await Migrator(target: target, folder: folder).apply()
        }
    }

    /// From the reviews: shards of two splits (0/2 beside 0/3) would apply parts twice — a
    /// shard refuses while a shard of another N holds its lock; undo refuses a migration still
    /// being applied in shards; a move applied by shards in turn can be undone (each counts
    /// only its own blobs at the destination).
    @Test func anotherSplitAndUndoWhileInShardsAreRefusedAndShardedMovesUndo() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let blobs = BlobClient(account: server.account)
            let folder = try MigratorTests.folder([
                "V1__move.yaml":
                    "description: move\noperations:\n  - move-blobs: {container: speakers, prefix: \"\", to-container: photos, to-prefix: \"\"}\n"
            ])
            func shard(_ i: Int, of n: Int) -> Migrator {
                Migrator(target: RunTarget(location: .account(server.account), shard: Shard(index: i, count: n)), folder: folder)
            }
            let whole = Migrator(target: RunTarget(location: .account(server.account)), folder: folder)
            _ = try await blobs.ensureContainer(ReservedNames.ledgerContainer)
            try await blobs.putBlob(Data(), container: ReservedNames.ledgerContainer, name: "migrate.shard-0-of-3.lock")
            let other = try await blobs.acquireLease(container: ReservedNames.ledgerContainer, name: "migrate.shard-0-of-3.lock", seconds: nil)
            do {
                _ = try await shard(0, of: 2).apply()
                Issue.record("a shard ran beside a shard of another split")
            } catch let error as RunError {
                #expect(error.phrase.description.contains("a shard of another split holds its lock"), "\(error.phrase)")
            }
            try await blobs.releaseLease(container: ReservedNames.ledgerContainer, name: "migrate.shard-0-of-3.lock", id: other)
            _ = try await shard(0, of: 2).apply()
            do {
                _ = try await whole.undo(to: MigrationVersion("1")!)
                Issue.record("undo ran while the migration is in shards")
            } catch let error as RunError {
                #expect(error.phrase.description.contains("being applied in shards"), "\(error.phrase)")
            }
            _ = try await shard(1, of: 2).apply()
            let status = try await whole.status()
            #expect(status.entries.map(\.state) == [.applied] && status.entries[0].record?.undoChecks == [0])
            _ = try await whole.undo(to: MigrationVersion("1")!)
            var names: [String] = []
            for try await page in blobs.list(container: "speakers") { names += page.map(\.name) }
            #expect(names.count == 30)
        }
    }
}
