import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import StorageEmulator
import Synchronization
import Testing

/// `azseed migrate` as a Swift program runs it, against an in-process emulator: the dry run's
/// counts, apply, status, the refusals (a changed file, a failed run), resuming after a run
/// is stopped at any point, and concurrent writers whose updates survive.
@Suite struct MigratorTests {
    /// `count` entities in partitions `p0`…`p(partitions-1)` of table `events`, each with
    /// `Place` = "x" and `Number`.
    static func seed(_ tables: TableClient, count: Int, partitions: Int) async throws {
        try await tables.createTable("events")
        var byPartition: [String: [TableBatchOperation]] = [:]
        for i in 0..<count {
            let entity = TableEntity(
                partitionKey: "p\(i % partitions)", rowKey: String(format: "%06d", i),
                properties: ["Place": .string("x"), "Number": .int32(Int32(i))])
            byPartition[entity.partitionKey, default: []].append(.insert(entity))
        }
        for operations in byPartition.values {
            for start in stride(from: 0, to: operations.count, by: 100) {
                try await tables.submit(Array(operations[start..<min(start + 100, operations.count)]), to: "events")
            }
        }
    }

    static func folder(_ files: [String: String]) throws -> URL {
        let folder = try Scratch.folder("migrate")
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        return folder
    }

    static func all(_ tables: TableClient) async throws -> [TableEntity] {
        var out: [TableEntity] = []
        for try await page in tables.query("events", fullMetadata: true) { out += page.map(\.entity) }
        return out
    }

    static let files = [
        "V1__rename.yaml":
            "description: Place becomes Venue\noperations:\n  - rename-property: {table: events, where: \"PartitionKey ne 'p2'\", from: Place, to: Venue}\n",
        "V2__capacity.yaml":
            "description: Capacity 100\noperations:\n  - set-property: {table: events, name: Capacity, value: 100, if-missing: true}\n  - delete-entities: {table: events, where: \"Number ge 290\", allow-destructive: true}\n",
    ]

    @Test func planCountsApplyChangesAndARerunDoesNothing() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 300, partitions: 3)
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try Self.folder(Self.files))

            let (status, plan) = try await migrator.plan()
            #expect(status.entries.map(\.state) == [.pending, .pending])
            #expect(plan.map { $0.operations.map(\.changes) } == [[200], [300, 10]])
            #expect(plan[0].operations[0].samples.first?.lines == ["- Place: String 'x'", "+ Venue: String 'x'"])
            #expect(try await Self.all(tables).allSatisfy { $0["Place"] != nil && $0["Capacity"] == nil }, "the plan wrote")

            let applied = try await migrator.apply()
            #expect(applied.map { $0.operations.map(\.changes) } == [[200], [300, 10]])
            let after = try await Self.all(tables)
            #expect(after.count == 290)
            #expect(
                after.allSatisfy {
                    $0["Capacity"] == .int32(100)
                        && ($0.partitionKey == "p2" ? $0["Place"] != nil : $0["Venue"] == .string("x") && $0["Place"] == nil)
                })

            let again = try await migrator.status()
            #expect(again.entries.map(\.state) == [.applied, .applied] && again.entries.allSatisfy { $0.record?.tool == "azseed" })
            #expect(try await migrator.apply().isEmpty)
            #expect(try await migrator.plan().1.isEmpty)
        }
    }

    /// Another folder's migration under the same version (a forgotten --dataset: a new user
    /// followed the printed advice, accepted its checksum, and the ledger then recorded as
    /// applied migrations that never ran): the refusal names both files and says not to
    /// accept, and repair refuses before any write (it would also have removed the records the
    /// wrong folder has no file for).
    @Test func anotherFoldersMigrationIsNotAnEditAndRepairWillNotAcceptIt() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 20, partitions: 2)
            let target = RunTarget(location: .account(server.account))
            _ = try await Migrator(target: target, folder: try Self.folder(["V1__rename.yaml": Self.files["V1__rename.yaml"]!])).apply()
            let other = Migrator(target: target, folder: try Self.folder(["V1__capacity.yaml": Self.files["V2__capacity.yaml"]!]))
            #expect(try await other.status().problems.map(\.isAnotherMigration) == [true])
            let attempts: [@Sendable () async throws -> Void] = [
                { _ = try await other.apply() }, { _ = try await other.repair(acceptChecksums: true) },
                { _ = try await other.repair(acceptChecksums: false) },
            ]
            for attempt in attempts {
                await #expect {
                    try await attempt()
                } throws: { error in
                    let text = (error as? RunError)?.phrase.description ?? ""
                    return text.contains(
                        "was applied from V1__rename.yaml ('Place becomes Venue'), but this folder's is V1__capacity.yaml ('Capacity 100')")
                        && text.contains("do not accept its checksum") && text.hasSuffix("nothing was written")
                }
            }
            let record = try #require(try await other.status().entries.first?.record)
            #expect(record.script == "V1__rename.yaml" && record.description == "Place becomes Venue")
            #expect(try await Self.all(tables).allSatisfy { $0["Capacity"] == nil })
        }
    }

    @Test func aChangedFileIsRefusedUntilRepairAcceptsIt() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 20, partitions: 2)
            let folder = try Self.folder(["V1__rename.yaml": Self.files["V1__rename.yaml"]!])
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: folder)
            _ = try await migrator.apply()
            try Data((Self.files["V1__rename.yaml"]! + "# edited\n").utf8).write(to: folder.appendingPathComponent("V1__rename.yaml"))
            try Data(Self.files["V2__capacity.yaml"]!.utf8).write(to: folder.appendingPathComponent("V2__capacity.yaml"))
            #expect(try await migrator.status().problems.map(\.state) == [.checksumChanged])
            await #expect {
                _ = try await migrator.apply()
            } throws: { error in
                let text = (error as? RunError)?.phrase.description ?? ""
                return text.contains("checksum") && text.contains("nothing was written")
            }
            #expect(try await Self.all(tables).allSatisfy { $0["Capacity"] == nil })
            #expect(try await migrator.repair(acceptChecksums: true).realigned == ["1"])
            #expect(try await migrator.apply().map(\.version) == ["2"])
        }
    }

    @Test func aFailedRunStopsIsRepairedAndResumes() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 50, partitions: 1)
            _ = try await tables.update(
                TableEntity(partitionKey: "p0", rowKey: "000030", properties: ["Place": .string("x"), "Number": .string("thirty")]), in: "events")
            let retype = "description: Number as Int64\noperations:\n  - retype-property: {table: events, name: Number, to: Int64}\n"
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try Self.folder(["V1__retype.yaml": retype]))
            let (_, plan) = try await migrator.plan()
            #expect(plan[0].operations[0].failures == 1 && plan[0].operations[0].firstFailure?.contains("000030") == true)

            await #expect(throws: RunError.self) { _ = try await migrator.apply() }
            let failed = try await migrator.status()
            #expect(failed.entries[0].state == .failed && failed.entries[0].record?.error?.contains("'thirty'") == true)
            let before = try await Self.all(tables)
            #expect(before.filter { $0["Number"]?.type == .int64 }.count == 30, "the entities before the failing one were migrated")
            await #expect(throws: RunError.self) { _ = try await migrator.apply() }  // refused while failed

            _ = try await tables.update(
                TableEntity(partitionKey: "p0", rowKey: "000030", properties: ["Place": .string("x"), "Number": .int32(30)]), in: "events")
            #expect(try await migrator.repair(acceptChecksums: false).cleared == ["1"])
            _ = try await migrator.apply()
            #expect(try await Self.all(tables).allSatisfy { $0["Number"]?.type == .int64 })
            #expect(try await migrator.status().entries[0].record?.counts == [50])
        }
    }

    /// A run stopped at a random point (cancelled mid-batch, as a kill would leave it) and run
    /// again gives exactly what one uninterrupted run gives: `replace-in-property` x -> xx is
    /// not idempotent, so a batch applied twice would show as xxxx.
    @Test(arguments: 0..<10) func aStoppedRunResumesExactly(trial: Int) async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 1_500, partitions: 7)
            let double = "description: x to xx\noperations:\n  - replace-in-property: {table: events, name: Place, find: x, replace: xx}\n"
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try Self.folder(["V1__double.yaml": double]))
            var stops = 0
            var random = SystemRandomNumberGenerator()
            for _ in 0..<3 {
                let run = Task { try await migrator.apply() }
                try await Task.sleep(for: .milliseconds(Int.random(in: 1...15, using: &random)))
                run.cancel()
                if (try? await run.value) == nil { stops += 1 }
            }
            #expect(stops > 0, "trial \(trial): no run was stopped before it finished")
            _ = try await migrator.apply()
            let after = try await Self.all(tables)
            #expect(after.count == 1_500 && after.allSatisfy { $0["Place"] == .string("xx") }, "trial \(trial), \(stops) stops")
            let status = try await migrator.status()
            #expect(status.entries[0].state == .applied && status.entries[0].record?.counts == [1_500])
        }
    }

    /// Stopped exactly after the n-th batch was committed and before the ledger heard of it:
    /// the resumed run finds the pending batch committed and goes on after it.
    @Test func aRunStoppedBetweenCommitAndCheckpointDoesNotApplyTwice() async throws {
        struct Kill: Error {}
        for stopAt in [2, 3, 7] {
            try await TestEmulator.withRunning { server in
                let tables = TableClient(account: server.account)
                try await Self.seed(tables, count: 700, partitions: 2)
                let double = "description: x to xx\noperations:\n  - replace-in-property: {table: events, name: Place, find: x, replace: xx}\n"
                var migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try Self.folder(["V1__double.yaml": double]))
                let saves = Mutex(0)
                migrator.beforeCheckpoint = {
                    if saves.withLock({
                        $0 += 1
                        return $0
                    }) == stopAt {
                        throw Kill()
                    }
                }
                await #expect(throws: Kill.self) { _ = try await migrator.apply() }
                migrator.beforeCheckpoint = nil
                _ = try await migrator.apply()
                let after = try await Self.all(tables)
                #expect(after.count == 700 && after.allSatisfy { $0["Place"] == .string("xx") }, "stopped at checkpoint \(stopAt)")
                #expect(try await migrator.status().entries[0].record?.counts == [700])
            }
        }
    }

    /// One migrate run per account: a held lock refuses apply (nothing written) or makes it
    /// wait; `breakLock` ends a lock whose run is gone; a finished run leaves the lock free.
    @Test func theMigrateLockAdmitsOneRunAtATime() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            let blobs = BlobClient(account: server.account)
            try await Self.seed(tables, count: 20, partitions: 1)
            let folder = try Self.folder(["V1__rename.yaml": Self.files["V1__rename.yaml"]!])
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: folder)
            _ = try await migrator.status()  // reads take no lock
            _ = try await blobs.ensureContainer(ReservedNames.ledgerContainer)
            try await blobs.putBlob(Data(), container: ReservedNames.ledgerContainer, name: "migrate.lock")
            let other = try await blobs.acquireLease(container: ReservedNames.ledgerContainer, name: "migrate.lock", seconds: nil)

            await #expect {
                _ = try await migrator.apply()
            } throws: { error in
                (error as? RunError)?.phrase.settings.contains(.migrateBreakLock) == true
            }
            #expect(try await Self.all(tables).allSatisfy { $0["Place"] != nil }, "a refused run wrote")

            var waiting = migrator
            waiting.target.lockTimeout = .seconds(10)
            let release = Task {
                try await Task.sleep(for: .milliseconds(1_500))
                try await blobs.releaseLease(container: ReservedNames.ledgerContainer, name: "migrate.lock", id: other)
            }
            #expect(try await waiting.apply().count == 1)
            try await release.value
            #expect(try await blobs.properties(container: ReservedNames.ledgerContainer, name: "migrate.lock") != nil)
            _ = try await blobs.acquireLease(container: ReservedNames.ledgerContainer, name: "migrate.lock", seconds: nil)  // free again
            #expect(try await migrator.breakLock())
            #expect(try await migrator.apply().isEmpty)
        }
    }

    /// Whoever may write the target's tables can edit the ledger: a migration record that is
    /// not one is refused in one line, never misread (and never makes apply run twice).
    @Test func aDamagedMigrationRecordIsRefused() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 10, partitions: 1)
            let migrator = Migrator(
                target: RunTarget(location: .account(server.account)), folder: try Self.folder(["V1__rename.yaml": Self.files["V1__rename.yaml"]!]))
            _ = try await migrator.apply()
            let edits: [(String, EdmValue?)] = [
                ("Schema", .int32(9)), ("State", .string("done")), ("Counts", .string("1,-2")), ("Version", .string("01")),
                ("PendingCount", .int32(500)), ("StartedAt", .string("yesterday")), ("Checksum", .string(String(repeating: "a", count: 65))),
                // From an attacker's review: counts that overflow a sum crashed `status`.
                ("Counts", .string("9223372036854775807,9223372036854775807")),
                // From an attacker's review: the count the scan goes on from, negative or with
                // its key and no count (the count would restart at 0 past the key).
                ("UndoCheckConflicts", .int64(-5)), ("UndoCheckConflicts", .int32(3)), ("UndoCheckRowKey", .string("000003")),
            ]
            for (name, value) in edits {
                var entity = try await tables.get(partitionKey: "migration", rowKey: "1", from: ReservedNames.ledgerTable)!.entity
                let original = entity
                entity[name] = value
                if name == "PendingCount" {
                    entity["Operation"] = .int32(0)
                    entity["PendingPartitionKey"] = .string("p0")
                }
                if name.hasPrefix("UndoCheck") {
                    entity["Operation"] = .int32(0)
                    entity["State"] = .string("running")
                    entity["UndoCheckPartitionKey"] = .string("p0")
                    entity["UndoCheckRowKey"] = .string("000003")
                }
                _ = try await tables.upsert(entity, into: ReservedNames.ledgerTable)
                await #expect {
                    _ = try await migrator.apply()
                } throws: { error in
                    let text = "\(error)"
                    return error is MigrationRecordDamaged && text.contains("damaged") && !text.contains("\n")
                }
                _ = try await tables.upsert(original, into: ReservedNames.ledgerTable)
            }
            #expect(try await migrator.status().entries.map(\.state) == [.applied])
        }
    }

    /// Blob steps: a move copies server-side then deletes, keeps the container's public access
    /// and content headers; properties change only where they differ; a re-run does nothing.
    @Test func blobStepsMoveSetAndDeleteIdempotently() async throws {
        try await TestEmulator.withRunning { server in
            let blobs = BlobClient(account: server.account)
            try await blobs.createContainer("speakers", access: .blob)
            for name in ["a.jpg", "b.jpg", "old/c.txt"] {
                try await blobs.putBlob(
                    Data(name.utf8), container: "speakers", name: name, options: BlobUploadOptions(contentType: "image/jpeg", metadata: ["k": "v"]))
            }
            let files = [
                "V1__move.yaml":
                    "description: move\noperations:\n  - move-blobs: {container: speakers, prefix: \"\", to-container: photos, to-prefix: \"2026/\"}\n",
                "V2__cache.yaml":
                    "description: cache\noperations:\n  - set-blob-properties: {container: photos, prefix: \"2026/\", cache-control: \"max-age=60\", metadata: {owner: app}}\n  - delete-blobs: {container: photos, prefix: \"2026/old/\", allow-destructive: true}\n",
            ]
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try Self.folder(files))
            let (_, plan) = try await migrator.plan()
            #expect(plan[0].operations[0].changes == 3 && plan[0].operations[0].samples.first?.lines == ["speakers/a.jpg -> photos/2026/a.jpg"])
            let applied = try await migrator.apply()
            #expect(applied.map { $0.operations.map(\.changes) } == [[3], [3, 1]])
            var moved: [String] = []
            for try await page in blobs.list(container: "photos") { moved += page.map(\.name) }
            #expect(moved == ["2026/a.jpg", "2026/b.jpg"])
            var left: [String] = []
            for try await page in blobs.list(container: "speakers") { left += page.map(\.name) }
            #expect(left.isEmpty)
            let a = try await blobs.properties(container: "photos", name: "2026/a.jpg")
            #expect(
                a?.contentType == "image/jpeg" && a?.cacheControl == "max-age=60" && a?.metadata == ["k": "v", "owner": "app"] && a?.contentMD5 != nil
            )
            #expect(try await blobs.containerAccess("photos") == .blob)
            #expect(try await blobs.download(container: "photos", name: "2026/a.jpg") == Data("a.jpg".utf8))
            #expect(try await migrator.plan().1.isEmpty)
        }
    }

    /// An idempotent step writes batches concurrently and records only the key before which
    /// all are written: stopped at a checkpoint, the resumed run meets the batches written after
    /// it already changed and leaves them (a rename of a renamed entity changes nothing).
    @Test func anIdempotentStepStoppedAtACheckpointResumes() async throws {
        struct Kill: Error {}
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 6_000, partitions: 5)
            let rename = "description: rename\noperations:\n  - rename-property: {table: events, from: Place, to: Venue}\n"
            var migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try Self.folder(["V1__rename.yaml": rename]))
            let saves = Mutex(0)
            // The scan records its undo count before each page's first batch: by the fourth
            // save, 30 batches were sent with at most 16 in flight, so some key is past.
            migrator.beforeCheckpoint = {
                if saves.withLock({
                    $0 += 1
                    return $0
                }) == 4 {
                    throw Kill()
                }
            }
            await #expect(throws: Kill.self) { _ = try await migrator.apply() }
            let stopped = try await migrator.status().entries[0]
            #expect(stopped.state == .running && stopped.record?.checkpoint?.after != nil && stopped.record?.checkpoint?.pending == nil)
            migrator.beforeCheckpoint = nil
            _ = try await migrator.apply()
            let after = try await Self.all(tables)
            #expect(after.count == 6_000 && after.allSatisfy { $0["Venue"] == .string("x") && $0["Place"] == nil })
            #expect(try await migrator.status().entries[0].record?.undoChecks == [0])
        }
    }

    /// copy-table copies every entity exactly; a plan counts the steps after it on the copy as
    /// if the copy were there.
    @Test func copyTableCopiesAndThePlanSeesTheCopy() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 250, partitions: 3)
            let files = [
                "V1__archive.yaml": "description: archive\noperations:\n  - copy-table: {from: events, to: archive}\n",
                "V2__rename.yaml": "description: rename\noperations:\n  - rename-property: {table: archive, from: Place, to: Venue}\n",
            ]
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try Self.folder(files))
            #expect(try await migrator.plan().1.map { $0.operations.map(\.changes) } == [[250], [250]])
            #expect(try await migrator.apply().map { $0.operations.map(\.changes) } == [[250], [250]])
            var archived: [TableEntity] = []
            for try await page in tables.query("archive", fullMetadata: true) { archived += page.map(\.entity) }
            #expect(archived.count == 250 && archived.allSatisfy { $0["Venue"] == .string("x") && $0["Number"]?.type == .int32 })
            #expect(try await Self.all(tables).allSatisfy { $0["Place"] == .string("x") })
        }
    }

    /// rekey inserts under the new keys, then deletes the old; a half-moved entity (both there,
    /// as a stopped run leaves it) is finished; templates that give other keys again are refused
    /// entity by entity; a second run changes nothing.
    @Test func rekeyMovesEntitiesExactlyOnce() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 300, partitions: 3)
            // Half-moved already: entity 000005 of p2 is also at its new keys.
            var half = try await tables.get(partitionKey: "p2", rowKey: "000005", from: "events")!.entity
            half.partitionKey = "moved-x"
            _ = try await tables.insert(half, into: "events")
            let files = [
                "V1__rekey.yaml":
                    "description: rekey\noperations:\n  - rekey: {table: events, where: \"PartitionKey lt 'q'\", partition: \"moved-{{Place}}\", allow-destructive: true}\n"
            ]
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try Self.folder(files))
            let (_, plan) = try await migrator.plan()
            #expect(plan[0].operations[0].changes == 300 && plan[0].operations[0].samples.first?.lines.first?.hasPrefix("~ keys (p0, ") == true)
            #expect(try await migrator.apply()[0].operations[0].changes == 300)
            let after = try await Self.all(tables)
            #expect(after.count == 300 && after.allSatisfy { $0.partitionKey == "moved-x" && $0["Place"] == .string("x") })
            #expect(try await migrator.plan().1.isEmpty)

            let growing = [
                "V2__grow.yaml": "description: grow\noperations:\n  - rekey: {table: events, row: \"{{RowKey}}-x\", allow-destructive: true}\n"
            ]
            let refused = Migrator(target: RunTarget(location: .account(server.account)), folder: try Self.folder(growing))
            let (_, grow) = try await refused.plan()
            #expect(grow[0].operations[0].failures == 300 && grow[0].operations[0].firstFailure?.contains("give other keys again") == true)
        }
    }

    /// From an attacker's review: a stopped non-idempotent step whose last batch was written,
    /// then changed by someone else (another property), was taken as not written — or, with
    /// the step's own property overwritten, as written. Now a batch is told written by the
    /// value the step writes; when no entity tells, the run stops and says so.
    @Test func aPendingBatchChangedBySomeoneElseIsToldApartOrStopsTheRun() async throws {
        struct Kill: Error {}
        for overwriteTheProperty in [false, true] {
            try await TestEmulator.withRunning { server in
                let tables = TableClient(account: server.account)
                try await Self.seed(tables, count: 300, partitions: 1)
                let double = "description: x to xx\noperations:\n  - replace-in-property: {table: events, name: Place, find: x, replace: xx}\n"
                var migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try Self.folder(["V1__double.yaml": double]))
                let saves = Mutex(0)
                migrator.beforeCheckpoint = {
                    if saves.withLock({
                        $0 += 1
                        return $0
                    }) == 3 {
                        throw Kill()
                    }
                }
                await #expect(throws: Kill.self) { _ = try await migrator.apply() }
                migrator.beforeCheckpoint = nil
                // Batch 2 (000100…000199) was written; its pending record says so only by value.
                for i in 100..<200 {
                    let key = String(format: "%06d", i)
                    // Place back to "x": as if the batch had never been written and the app had
                    // touched each entity since — which the old check took for written.
                    let change: EntityProperties =
                        overwriteTheProperty ? ["Place": .string("x"), "Touched": .boolean(true)] : ["Touched": .boolean(true)]
                    _ = try await tables.upsert(TableEntity(partitionKey: "p0", rowKey: key, properties: change), into: "events", merge: true)
                }
                if overwriteTheProperty {
                    await #expect {
                        _ = try await migrator.apply()
                    } throws: { error in "\(error)".contains("cannot be told written or not") }
                    #expect(try await migrator.status().entries[0].state == .failed)
                    #expect(try await migrator.repair(acceptChecksums: false).cleared == ["1"])
                }
                _ = try await migrator.apply()
                let places = try await Self.all(tables).map { $0["Place"] }
                #expect(places == Array(repeating: .string("xx"), count: 300), "overwritten: \(overwriteTheProperty)")
            }
        }
    }

    /// From an attacker's review: a failed run whose file was then edited was resumed at its old
    /// checkpoint, skipping the edited operations before it. Now it starts over when every
    /// operation it had run is safe to run twice, and repair refuses otherwise.
    @Test func aFailedRunWhoseFileChangedStartsOverOrIsRefused() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 5, partitions: 1)
            _ = try await tables.upsert(
                TableEntity(partitionKey: "p0", rowKey: "000004", properties: ["Bar": .string("x")]), into: "events", merge: true)
            let folder = try Self.folder([
                "V1__x.yaml":
                    "description: x\noperations:\n  - set-property: {table: events, name: Foo, value: 1}\n  - retype-property: {table: events, name: Bar, to: Int32}\n"
            ])
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: folder)
            await #expect(throws: RunError.self) { _ = try await migrator.apply() }
            try Data(
                "description: x\noperations:\n  - set-property: {table: events, name: Baz, value: 2}\n  - retype-property: {table: events, name: Bar, to: Int32, on-failure: skip}\n"
                    .utf8
            ).write(to: folder.appendingPathComponent("V1__x.yaml"))
            #expect(try await migrator.repair(acceptChecksums: false).restarted == ["1"])
            _ = try await migrator.apply()
            #expect(try await Self.all(tables).allSatisfy { $0["Baz"] == .int32(2) })

            // A step not safe to run twice among those it ran: refused.
            let other = try Self.folder([
                "V1__y.yaml":
                    "description: y\noperations:\n  - replace-in-property: {table: events, name: Place, find: x, replace: xx}\n  - retype-property: {table: events, name: Bar, to: Int32}\n"
            ])
            try await TestEmulator.withRunning { second in
                let t2 = TableClient(account: second.account)
                try await Self.seed(t2, count: 5, partitions: 1)
                _ = try await t2.upsert(
                    TableEntity(partitionKey: "p0", rowKey: "000004", properties: ["Bar": .string("x")]), into: "events", merge: true)
                let m2 = Migrator(target: RunTarget(location: .account(second.account)), folder: other)
                await #expect(throws: RunError.self) { _ = try await m2.apply() }
                try Data("description: y\noperations:\n  - replace-in-property: {table: events, name: Place, find: x, replace: xy}\n".utf8)
                    .write(to: other.appendingPathComponent("V1__y.yaml"))
                await #expect {
                    _ = try await m2.repair(acceptChecksums: false)
                } throws: { error in "\(error)".contains("not safe to run twice") }
            }
        }
    }

    /// From a new user's review: entities `on-failure: skip` leaves alone were not shown.
    @Test func aPlanCountsTheEntitiesASkipLeaves() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 50, partitions: 1)
            _ = try await tables.update(
                TableEntity(partitionKey: "p0", rowKey: "000030", properties: ["Place": .string("x"), "Number": .string("thirty")]), in: "events")
            let retype = "description: r\noperations:\n  - retype-property: {table: events, name: Number, to: Int64, on-failure: skip}\n"
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try Self.folder(["V1__r.yaml": retype]))
            let operation = try await migrator.plan().1[0].operations[0]
            #expect(operation.changes == 49 && operation.skipped == 1 && operation.failures == 0)
        }
    }

    /// Another writer updates entities while the migration runs: every one of its updates
    /// survives (each migration write is conditional on the ETag read; a refused one is read
    /// again) and every entity is migrated.
    @Test func concurrentUpdatesSurviveAndAreMigrated() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await Self.seed(tables, count: 3_000, partitions: 10)
            let migrator = Migrator(
                target: RunTarget(location: .account(server.account)), folder: try Self.folder(["V1__rename.yaml": Self.files["V1__rename.yaml"]!]))
            let touched = Mutex<Set<String>>([])
            let writer = Task {
                var i = 0
                while !Task.isCancelled && i < 3_000 {
                    let key = String(format: "%06d", i)
                    _ = try await tables.upsert(
                        TableEntity(partitionKey: "p\(i % 10)", rowKey: key, properties: ["Touched": .boolean(true)]), into: "events", merge: true)
                    touched.withLock { _ = $0.insert(key) }
                    i += 7
                }
            }
            _ = try await migrator.apply()
            writer.cancel()
            _ = try? await writer.value
            let after = try await Self.all(tables)
            let keys = touched.withLock { $0 }
            #expect(!keys.isEmpty)
            for entity in after where keys.contains(entity.rowKey) {
                #expect(entity["Touched"] == .boolean(true), "\(entity.rowKey) lost its concurrent update")
            }
            // Entities the writer touched after the migration passed them keep Place only if
            // the writer's merge re-added nothing: a merge never removes Venue.
            #expect(after.filter { $0.partitionKey != "p2" }.allSatisfy { $0["Venue"] == .string("x") && $0["Place"] == nil })
        }
    }
}
