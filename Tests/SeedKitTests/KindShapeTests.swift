import AzseedTestSupport
import AzureStorage
import Foundation
import Testing

@testable import SeedKit

/// A generated kind's shape (PartitionKey, property names and count) is checked once, not per
/// entity; each entity's size still is.
@Suite struct KindShapeTests {
    func desired(_ fields: String, count: Int = 3, templates: [String: String] = [:]) throws -> GeneratedDataset {
        let folder = try Scratch.folder("shape")
        if !templates.isEmpty {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("templates"), withIntermediateDirectories: true)
            for (name, text) in templates {
                try text.write(to: folder.appendingPathComponent("templates/\(name)"), atomically: true, encoding: .utf8)
            }
        }
        let yaml = """
            name: shapes
            seed: 3
            window: { from: 2026-01-01, days: 10 }
            tables:
              - name: things
                kinds:
                  - name: thing
                    partition: things
                    count: \(count)
                    key: [N]
                    fields:
                      N: { sequence: 1 }
            \(fields)
            """
        try yaml.write(to: folder.appendingPathComponent("dataset.yaml"), atomically: true, encoding: .utf8)
        return try GeneratedDataset.make(try Dataset.load(directory: folder), options: TestSupport.options())
    }

    @Test func aGeneratedKindsCursorChecksItsShapeOnce() async throws {
        let desired = try desired("          Size: { pick: [small, large] }")
        let group = try #require(desired.storage.groups.first { $0.kind == "thing" })
        #expect(try group.entities().checksShape)
        // The planner's plans are checked whole, so their batches are sent unchecked; any
        // other plan is checked as it is sent.
        let plan = try await Planner.plan(desired: desired.storage, observed: ObservedState(), header: PlannerTests.header(desired))
        #expect(plan.entitiesChecked)
        var handMade = plan
        handMade = Plan(
            header: plan.header, containers: [], blobs: [], tables: [], entities: plan.entities, entityDeletes: [], unchangedEntities: [:],
            extraEntities: [:], extraBlobs: [:])
        #expect(!handMade.entitiesChecked)
    }

    @Test func anEntityTooLargeIsStillRefusedBeforeAnythingIsWritten() async throws {
        // 36 properties of 30,000 characters: each value within Azure's limits, the entity
        // (about 2.1 MB as Azure counts it) not.
        let text = String(repeating: "x", count: 30_000)
        let fields = (0..<36).map { "          F\($0): { const: \"\(text)\" }" }.joined(separator: "\n")
        let desired = try desired(fields, count: 1)
        await #expect {
            _ = try await Planner.plan(desired: desired.storage, observed: ObservedState(), header: PlannerTests.header(desired))
        } throws: { error in
            "\(error)".contains("1 MiB") && "\(error)".contains("nothing was written")
        }
    }

    @Test func entitiesBuiltAheadAreTheKindsInOrderAndAnErrorComesInItsPlace() async throws {
        let desired = try desired("          Size: { pick: [small, large] }", count: PrefetchingCursor.chunkSize * 2 + 17)
        let group = try #require(desired.storage.groups.first { $0.kind == "thing" })
        var ahead = try group.entities()
        #expect(ahead is PrefetchingCursor)
        var plain = try KindCursor(engine: try #require(desired.tables.first?.engines.first), datasetFile: "dataset.yaml")
        var count = 0
        while let entity = try await ahead.next() {
            #expect(entity == (try plain.next()))
            count += 1
        }
        #expect(count == PrefetchingCursor.chunkSize * 2 + 17)
        #expect(try plain.next() == nil)

        // A value too long for Azure, made by some entities only: the entities before the
        // first of them come out, then its error.
        let long = String(repeating: "y", count: 20_000)
        let failing = try self.desired(
            "          Size: { pick: [s, \"\(long)\"], weights: [600, 1] }\n          Twice: { template: twice.mustache }", count: 5000,
            templates: ["twice.mustache": "{{Size}}{{Size}}"])
        var cursor = try #require(failing.storage.groups.first { $0.kind == "thing" }).entities()
        var before = 0
        await #expect {
            while try await cursor.next() != nil { before += 1 }
        } throws: { "\($0)".contains("longer than 32K") }
        var reference = try KindCursor(engine: try #require(failing.tables.first?.engines.first), datasetFile: "dataset.yaml")
        var expected = 0
        while (try? reference.next()) != nil { expected += 1 }
        #expect(before == expected && expected > 0)
    }
}
