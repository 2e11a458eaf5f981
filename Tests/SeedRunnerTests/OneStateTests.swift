import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import Testing

/// One desired state (issue 47): for random datasets (SpeakEasy at a random seed and count)
/// and random migration sequences, the dataset generated and the migrations simulated over it
/// in memory equals the dataset applied and the migrations applied to an emulator — entity for
/// entity and blob for blob: a plan (with prune) against that target finds nothing to do, and a
/// re-seed writes nothing. Before, every re-seed put migrated data back in its old shape.
@Suite(.serialized) struct OneStateTests {
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        mutating func pick<T>(_ items: [T]) -> T { items[next(items.count)] }
    }

    /// Operations over SpeakEasy's table and containers, each valid whatever ran before it.
    static let operations: [@Sendable (inout Generator) -> String] = [
        { g in
            "rename-property: {table: events, where: \"PartitionKey eq 'Events'\", from: \(g.pick(["EventLocation", "EventName", "Extra"])), to: \(g.pick(["Venue", "Title2", "Place"]))}"
        },
        { g in
            "set-property: {table: events, where: \"PartitionKey eq 'Events'\", name: \(g.pick(["Capacity", "Extra", "EventName"])), value: \(g.next(500)), if-missing: \(g.pick(["true", "false"]))}"
        },
        { g in
            "remove-property: {table: events, where: \"PartitionKey eq '\(g.pick(["Events", "speakers"]))'\", name: \(g.pick(["Bio", "EventDescription", "Capacity"])), allow-destructive: true}"
        },
        { g in
            "replace-in-property: {table: events, where: \"PartitionKey eq 'speakers'\", name: ImageUrl, find: /speakers/, replace: /\(g.pick(["photos", "pics"]))/}"
        },
        { g in "replace-in-property: {table: events, name: SpeakerName, find: \(g.pick(["a", "o", "Jo"])), replace: \(g.pick(["4", "0", "Yo"]))}" },
        { g in
            "delete-entities: {table: events, where: \"EventName eq '\(g.pick(["iOS Meetup", "HTML5 Meetup", "Android Meetup"]))'\", allow-destructive: true}"
        },
        { g in "move-blobs: {container: speakers, prefix: \"\(g.pick(["B", "M", ""]))\", to-container: photos, to-prefix: \"\(g.pick(["x/", ""]))\"}"
        },
        { g in
            "set-blob-properties: {container: speakers, prefix: \"\(g.pick(["", "C", "D"]))\", cache-control: \"max-age=\(g.next(999))\", metadata: {owner: m\(g.next(9))}}"
        },
        { g in "delete-blobs: {container: speakers, prefix: \"\(g.pick(["E", "T", "Z"]))\", allow-destructive: true}" },
        { g in "copy-table: {from: events, to: \(g.pick(["eventsarchive", "eventsbackup"]))}" },
    ]

    /// A copy of SpeakEasy with `migrations` written into its `migrations/` folder.
    static func dataset(_ migrations: [String]) throws -> URL {
        let folder = try Scratch.folder("one-state").appendingPathComponent("dataset")
        let source = UseCaseTests.speakeasy
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for item in ["dataset.yaml", "images", "templates"] {
            try FileManager.default.copyItem(at: source.appendingPathComponent(item), to: folder.appendingPathComponent(item))
        }
        let migrationsFolder = folder.appendingPathComponent("migrations")
        try FileManager.default.createDirectory(at: migrationsFolder, withIntermediateDirectories: true)
        for (i, text) in migrations.enumerated() {
            try Data(text.utf8).write(to: migrationsFolder.appendingPathComponent("V\(i + 1)__step.yaml"))
        }
        return folder
    }

    @Test(arguments: Array(stride(from: 11, through: 88, by: 11)))
    func generatedThenSimulatedEqualsAppliedThenMigrated(seed: Int) async throws {
        var g = Generator(state: UInt64(seed))
        var migrations: [String] = []
        for version in 0..<(1 + g.next(4)) {
            let steps = (0..<(1 + g.next(3))).map { _ in "  - " + Self.operations[g.next(Self.operations.count)](&g) }
            migrations.append("description: step \(version + 1)\noperations:\n" + steps.joined(separator: "\n") + "\n")
        }
        let directory = try Self.dataset(migrations)
        let request = DatasetRequest(
            directory: directory, seed: UInt64(g.next(1000)), counts: ["event": 5 + g.next(40)], now: EdmDateTime(iso8601: "2026-11-21")!)
        try await TestEmulator.withRunning { server in
            let target = RunTarget(location: .account(server.account))
            _ = try await Seeder(target: target).apply(request, prune: false, concurrency: 8)
            let reports = try await Migrator(target: target, folder: directory.appendingPathComponent("migrations")).apply()
            let changed = reports.flatMap(\.operations).reduce(0) { $0 + $1.changes }
            print("one state, seed \(seed): \(migrations.count) migrations changed \(changed)")
            let plan = try await Seeder(target: target).plan(request, prune: true, digests: false)
            let nothingToDo = plan.isEmpty
            #expect(
                nothingToDo,
                "seed \(seed): \(plan.summary) after\n\(migrations.joined(separator: "---\n"))\nfirst: \(plan.entities.first.map { "\($0)" } ?? "") \(plan.blobs.first { $0.change != .unchanged }.map { "\($0)" } ?? "")"
            )
            // A re-seed, with no flags: writes nothing, puts nothing back.
            let again = try await Seeder(target: target).apply(
                DatasetRequest(directory: directory, now: EdmDateTime(iso8601: "2026-11-21")!), prune: false, concurrency: 8)
            let wroteNothing = again.plan.isEmpty
            #expect(wroteNothing, "seed \(seed): a re-seed would write \(again.plan.summary)")
        }
    }
}
