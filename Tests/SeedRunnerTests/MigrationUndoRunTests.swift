import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import StorageEmulator
import Synchronization
import Testing

/// `migrate undo` against an in-process emulator: the data comes back exactly as it was
/// before apply, an undo stopped anywhere resumes, and what undo cannot put back exactly is
/// refused before the first write.
@Suite struct MigrationUndoRunTests {
    static let files = [
        "V1__venue.yaml":
            "description: Place becomes Venue\noperations:\n  - rename-property: {table: events, where: \"PartitionKey ne 'p2'\", from: Place, to: Venue}\n",
        "V2__capacity.yaml":
            "description: Capacity\noperations:\n  - create-table: {table: rooms}\n  - set-property: {table: events, name: Capacity, template: \"{{Number}}\", type: Int64, if-missing: true}\n",
        "V3__photos.yaml":
            "description: photos\noperations:\n  - move-blobs: {container: speakers, prefix: \"\", to-container: photos, to-prefix: \"\"}\n  - replace-in-property: {table: events, name: Url, find: /speakers/, replace: /photos/}\n",
    ]

    /// Entities (a few with Capacity already, some with a Url) and blobs with metadata.
    static func seed(_ server: EmulatorServer) async throws {
        let tables = TableClient(account: server.account)
        try await MigratorTests.seed(tables, count: 600, partitions: 3)
        for i in stride(from: 0, to: 600, by: 7) {
            var entity = try #require(try await tables.get(partitionKey: "p\(i % 3)", rowKey: String(format: "%06d", i), from: "events")).entity
            entity["Url"] = .string("https://x/speakers/\(i).jpg")
            if i % 2 == 0 { entity["Capacity"] = .int32(5) }
            _ = try await tables.upsert(entity, into: "events")
        }
        let blobs = BlobClient(account: server.account)
        try await blobs.createContainer("speakers", access: .blob)
        for name in ["a.jpg", "b/c.jpg"] {
            try await blobs.putBlob(
                Data(name.utf8), container: "speakers", name: name,
                options: BlobUploadOptions(contentType: "image/jpeg", cacheControl: "max-age=9", metadata: ["who": name]))
        }
    }

    /// Everything a user can see of the data: entities, blobs with their properties.
    static func picture(_ server: EmulatorServer) async throws -> ([TableEntity], [String]) {
        let blobs = BlobClient(account: server.account)
        var seen: [String] = []
        for container in try await blobs.listContainers() where container != ReservedNames.ledgerContainer {
            for try await page in blobs.list(container: container) {
                for blob in page {
                    let data = try await blobs.download(container: container, name: blob.name)
                    seen.append(
                        "\(container)/\(blob.name) \(String(decoding: data, as: UTF8.self)) \(blob.contentType ?? "") \(blob.cacheControl ?? "") \(blob.metadata.sorted { $0.key < $1.key })"
                    )
                }
            }
        }
        let entities = try await MigratorTests.all(TableClient(account: server.account)).sorted {
            ($0.partitionKey, $0.rowKey) < ($1.partitionKey, $1.rowKey)
        }
        return (entities, seen.sorted())
    }

    @Test func undoPutsBackExactlyWhatApplyChangedAndApplyRunsItAgain() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let before = try await Self.picture(server)
            let tables = TableClient(account: server.account)
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(Self.files))
            _ = try await migrator.apply()
            let applied = try await Self.picture(server)
            #expect(applied.0 != before.0 && applied.1 != before.1)
            #expect(try await tables.listTables().contains("rooms"))

            // The dry run writes nothing and counts what undo changes.
            let plan = try await migrator.planUndo(to: MigrationVersion("1")!)
            #expect(plan.map(\.version) == ["3", "2", "1"])
            #expect(plan[0].operations.map(\.changes) == [86, 2])
            #expect(try await Self.picture(server) == applied)

            let undone = try await migrator.undo(to: MigrationVersion("1")!)
            #expect(undone.map(\.version) == ["3", "2", "1"])
            let after = try await Self.picture(server)
            #expect(after.0 == before.0, "entities differ after undo")
            #expect(after.1 == before.1, "blobs differ after undo")
            #expect(!(try await tables.listTables().contains("rooms")), "the table V2 created is still there")
            let status = try await migrator.status()
            #expect(status.entries.map(\.state) == [.undone, .undone, .undone])
            #expect(status.entries[0].record?.appliedCounts == [400])

            // Undone migrations are pending again: apply runs them, and gives what it gave before.
            #expect(try await migrator.plan().1.map(\.version) == ["1", "2", "3"])
            _ = try await migrator.apply()
            #expect(try await Self.picture(server) == applied)
        }
    }

    /// New data in the shape a migration makes (written by the new version of the app) is put
    /// back too: undo takes the data back to the old shape, not only the entities apply changed.
    @Test func entitiesWrittenSinceInTheNewShapeArePutBackToo() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let tables = TableClient(account: server.account)
            let migrator = Migrator(
                target: RunTarget(location: .account(server.account)),
                folder: try MigratorTests.folder(["V1__venue.yaml": Self.files["V1__venue.yaml"]!]))
            _ = try await migrator.apply()
            _ = try await tables.upsert(TableEntity(partitionKey: "p0", rowKey: "new", properties: ["Venue": .string("hall")]), into: "events")
            _ = try await migrator.undo(to: MigrationVersion("1")!)
            #expect(try await tables.get(partitionKey: "p0", rowKey: "new", from: "events")?.entity["Place"] == .string("hall"))
        }
    }

    @Test func anUndoStoppedAnywhereResumesAndApplyWaitsForIt() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let before = try await Self.picture(server)
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(Self.files))
            _ = try await migrator.apply()
            var stops = 0
            for delay in [2, 6, 12, 25] {
                let run = Task { try await migrator.undo(to: MigrationVersion("1")!) }
                try await Task.sleep(for: .milliseconds(delay))
                run.cancel()
                if (try? await run.value) == nil { stops += 1 }
            }
            #expect(stops > 0, "no undo was stopped")
            let status = try await migrator.status()
            if status.entries.contains(where: { $0.state == .undoing }) {
                await #expect(throws: RunError.self) { _ = try await migrator.apply() }
            }
            _ = try await migrator.undo(to: MigrationVersion("1")!)
            #expect(try await Self.picture(server) == before)
        }
    }

    @Test func anOperationThatCannotBeUndoneRefusesTheUndoBeforeAnyWrite() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let files = [
                "V1__venue.yaml": Self.files["V1__venue.yaml"]!,
                "V2__drop.yaml":
                    "description: drop\noperations:\n  - delete-entities: {table: events, where: \"Number ge 590\", allow-destructive: true}\n",
            ]
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(files))
            _ = try await migrator.apply()
            #expect(try await migrator.status().entries.map { $0.record?.undoChecks ?? [] } == [[0], []])
            let applied = try await Self.picture(server)
            for version in ["2", "1"] {
                do {
                    _ = try await migrator.undo(to: MigrationVersion(version)!)
                    Issue.record("undo \(version) ran")
                } catch let error as RunError {
                    #expect(
                        error.phrase.description.contains("migration 2, operation 1 (delete-entities on events) cannot be undone exactly")
                            && error.phrase.description.hasSuffix("nothing was written"), "\(error.phrase)")
                }
            }
            #expect(try await Self.picture(server) == applied)
        }
    }

    /// An entity that already has Venue and no Place looks renamed: undo could not tell it from
    /// the ones the rename made, and would turn it into a Place it never had.
    @Test func anEntityThatAlreadyLookedMigratedRefusesTheUndo() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let tables = TableClient(account: server.account)
            _ = try await tables.upsert(TableEntity(partitionKey: "p0", rowKey: "old", properties: ["Venue": .string("v")]), into: "events")
            let migrator = Migrator(
                target: RunTarget(location: .account(server.account)),
                folder: try MigratorTests.folder(["V1__venue.yaml": Self.files["V1__venue.yaml"]!]))
            _ = try await migrator.apply()
            #expect(try await migrator.status().entries.first?.record?.undoChecks == [1])
            let applied = try await Self.picture(server)
            do {
                _ = try await migrator.undo(to: MigrationVersion("1")!)
                Issue.record("undo ran over an entity it cannot tell apart")
            } catch let error as RunError {
                #expect(error.phrase.description.contains("1 entity already looked like what it makes"), "\(error.phrase)")
            }
            #expect(try await Self.picture(server) == applied)
        }
    }

    @Test func undoRefusesToDestroyWhatWasWrittenSince() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(Self.files))
            _ = try await migrator.apply()
            let tables = TableClient(account: server.account)
            let blobs = BlobClient(account: server.account)
            // A blob written since where the move would put one back, then an entity in the table V2 made.
            try await blobs.putBlob(Data("new".utf8), container: "speakers", name: "a.jpg", options: BlobUploadOptions(contentType: "image/jpeg"))
            let withBlob = try await Self.picture(server)
            do {
                _ = try await migrator.undo(to: MigrationVersion("3")!)
                Issue.record("undo moved a blob over one written since")
            } catch let error as RunError {
                #expect(error.phrase.description.contains("written since in speakers (e.g. a.jpg)"), "\(error.phrase)")
            }
            #expect(try await Self.picture(server) == withBlob)
            try await blobs.deleteBlob(container: "speakers", name: "a.jpg")
            _ = try await tables.insert(TableEntity(partitionKey: "r", rowKey: "1"), into: "rooms")
            do {
                _ = try await migrator.undo(to: MigrationVersion("2")!)
                Issue.record("undo deleted a table holding entities")
            } catch let error as RunError {
                #expect(error.phrase.description.contains("created table rooms, which holds entities now"), "\(error.phrase)")
            }
            // The chain (V3, then V2) is refused whole, before V3's undo wrote anything.
            #expect(try await migrator.status().entries.map(\.state) == [.applied, .applied, .applied])
        }
    }

    /// From an attacker's review: a value written between the apply-time check and the write
    /// (`…?fallback=/photos/…`) is replaced into one undo would not give back as it was. It is
    /// counted with its batch, so undo refuses instead of putting back something else.
    @Test func aValueChangedDuringApplyIsCountedAndRefusesTheUndo() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            try await MigratorTests.seed(tables, count: 300, partitions: 1)
            _ = try await tables.upsert(
                TableEntity(partitionKey: "p0", rowKey: "zzz", properties: ["Url": .string("/speakers/v.jpg")]), into: "events")
            let file = "description: photos\noperations:\n  - replace-in-property: {table: events, name: Url, find: /speakers/, replace: /photos/}\n"
            var migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(["V1__urls.yaml": file]))
            let once = Mutex(false)
            migrator.beforeCheckpoint = {
                guard
                    !once.withLock({ done in
                        defer { done = true }
                        return done
                    })
                else { return }
                _ = try await tables.upsert(
                    TableEntity(partitionKey: "p0", rowKey: "zzz", properties: ["Url": .string("/speakers/v.jpg?fallback=/photos/v.jpg")]),
                    into: "events")
            }
            _ = try await migrator.apply()
            #expect(
                try await tables.get(partitionKey: "p0", rowKey: "zzz", from: "events")?.entity["Url"]
                    == .string("/photos/v.jpg?fallback=/photos/v.jpg"))
            #expect(try await migrator.status().entries[0].record?.undoChecks == [1])
            await #expect(throws: RunError.self) { _ = try await migrator.undo(to: MigrationVersion("1")!) }
        }
    }

    /// From an attacker's review: a chain whose older migration would be refused is refused
    /// whole, before the newer one's undo writes anything.
    @Test func aChainIsRefusedWholeBeforeItsFirstWrite() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let files = [
                "V1__audit.yaml": "description: audit\noperations:\n  - create-table: {table: audit}\n",
                "V2__venue.yaml": Self.files["V1__venue.yaml"]!.replacingOccurrences(
                    of: "description: Place becomes Venue", with: "description: venue"),
            ]
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(files))
            _ = try await migrator.apply()
            _ = try await TableClient(account: server.account).insert(TableEntity(partitionKey: "a", rowKey: "1"), into: "audit")
            let applied = try await Self.picture(server)
            await #expect(throws: RunError.self) { _ = try await migrator.undo(to: MigrationVersion("1")!) }
            #expect(try await Self.picture(server) == applied)
            #expect(try await migrator.status().entries.map(\.state) == [.applied, .applied])
        }
    }

    /// From an attacker's review: a blob of the same bytes but other headers or metadata where
    /// the move would put one back is another blob: undo refuses rather than keep it and delete
    /// the moved one (and a forward move copies over it rather than keep it).
    @Test func aBlobOfTheSameBytesWithOtherHeadersIsNotTakenForTheMovedOne() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let migrator = Migrator(
                target: RunTarget(location: .account(server.account)),
                folder: try MigratorTests.folder(["V3__photos.yaml": Self.files["V3__photos.yaml"]!]))
            _ = try await migrator.apply()
            let blobs = BlobClient(account: server.account)
            try await blobs.putBlob(
                Data("a.jpg".utf8), container: "speakers", name: "a.jpg",
                options: BlobUploadOptions(contentType: "text/evil", metadata: ["who": "mallory"]))
            do {
                _ = try await migrator.undo(to: MigrationVersion("3")!)
                Issue.record("undo kept a blob of the same bytes and other headers")
            } catch let error as RunError {
                #expect(error.phrase.description.contains("written since in speakers (e.g. a.jpg)"), "\(error.phrase)")
            }
            #expect(try await blobs.properties(container: "photos", name: "a.jpg")?.metadata == ["who": "a.jpg"])
        }
    }

    /// From an attacker's review: a ledger record edited to be undoing with counts that do not
    /// match its undo is refused in one line, never indexed past its end.
    @Test func anUndoingRecordWithCountsThatDoNotMatchIsRefused() async throws {
        try await TestEmulator.withRunning { server in
            try await Self.seed(server)
            let migrator = Migrator(
                target: RunTarget(location: .account(server.account)),
                folder: try MigratorTests.folder(["V1__venue.yaml": Self.files["V1__venue.yaml"]!]))
            _ = try await migrator.apply()
            let ledger = TableClient(account: server.account)
            var record = try #require(try await ledger.get(partitionKey: "migration", rowKey: "1", from: ReservedNames.ledgerTable)).entity
            record["State"] = .string("undoing")
            record["Counts"] = .string("")
            record["Operation"] = .int32(1)
            _ = try await ledger.upsert(record, into: ReservedNames.ledgerTable)
            await #expect(throws: MigrationRecordDamaged.self) { _ = try await migrator.undo(to: MigrationVersion("1")!) }
        }
    }
}
