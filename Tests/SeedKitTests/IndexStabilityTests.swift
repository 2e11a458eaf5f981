import AzseedTestSupport
import AzureStorage
import Foundation
import PropertyBased
import Testing

@testable import SeedKit

/// Issue 29, item 1: in a kind keyed by a sequence, or listed as rows, an entity's values are a
/// function of its own generation index and the seed — never of its position after the RowKey
/// sort — so a larger count only adds entities and a smaller one only removes them.
@Suite struct IndexStabilityTests {
    /// A dataset whose `item` kind is keyed by a sequence and uses every generator that needs no
    /// other kind; `tag` is listed as rows with a sequence of its own.
    static func dataset(count: Int, step: Int) throws -> Dataset {
        let folder = try Scratch.folder()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("templates"), withIntermediateDirectories: true)
        try "item {{Seq}} of {{Colour}}".write(to: folder.appendingPathComponent("templates/label.mustache"), atomically: true, encoding: .utf8)
        let yaml = """
            name: stability
            seed: 7
            window: { from: 2026-01-01, days: 30 }
            tables:
              - name: items
                kinds:
                  - name: item
                    partition: items
                    key: [Seq]
                    count: \(count)
                    fields:
                      Seq: { sequence: { start: 1, step: \(step) } }
                      Colour: { pick: [red, green, blue], weights: [3, 2, 1] }
                      Size: { int: [1, 1000] }
                      Price: { double: [0, 100] }
                      Seen: { date: window, resolution: minute }
                      Fixed: { const: yes }
                      Maybe: { pick: [a, b], presence: 0.5 }
                      Label: { template: label.mustache }
                  - name: tag
                    partition: tags
                    key: [Name]
                    rows:
                      - { Name: alpha }
                      - { Name: beta }
                      - { Name: gamma }
                      - { Name: delta }
                    fields:
                      Order: { sequence: { start: 10, step: 10 } }
            """
        try yaml.write(to: folder.appendingPathComponent("dataset.yaml"), atomically: true, encoding: .utf8)
        return try Dataset.load(directory: folder)
    }

    static func entities(count: Int, step: Int, seed: UInt64) throws -> [String: GeneratedEntity] {
        let made = try GeneratedDataset.make(try dataset(count: count, step: step), options: TestSupport.options(seed: seed))
        var byKey: [String: GeneratedEntity] = [:]
        for table in made.tables {
            for e in try TestSupport.entities(table) { byKey[e.partitionKey + "/" + e.rowKey] = e }
        }
        return byKey
    }

    @Test func aLargerCountOnlyAddsEntities() async throws {
        await propertyCheck(input: Gen.int(in: 1...40), Gen.int(in: 1...20), Gen.int(in: 1...5), Gen.int(in: 0...1000)) { n, k, step, seed in
            let small = try! Self.entities(count: n, step: step, seed: UInt64(seed))
            let large = try! Self.entities(count: n + k, step: step, seed: UInt64(seed))
            #expect(small.count == n + 4 && large.count == n + k + 4)
            for (key, entity) in small {
                let other = large[key]
                #expect(other != nil, "entity \(key) of count \(n) is not among those of count \(n + k)")
                #expect(
                    other.map { $0.names == entity.names && $0.values == entity.values } ?? false,
                    "entity \(key) changed with the count: \(entity.values) -> \(other?.values ?? [])")
            }
        }
    }

    @Test func aSequenceKeyMatchesItsValue() throws {
        // The RowKey is hashed from the entity's own Seq, which it then stores.
        let made = try Self.entities(count: 5, step: 1, seed: 1)
        let seqs = made.values.filter { $0.partitionKey == "items" }.compactMap { e -> Int32? in
            guard let i = e.names.firstIndex(of: "Seq"), case .int32(let v) = e.values[i] else { return nil }
            return v
        }
        #expect(seqs.sorted() == [1, 2, 3, 4, 5])
        let four = try Self.entities(count: 4, step: 1, seed: 1)
        #expect(Set(four.keys).isSubset(of: Set(made.keys)))
    }
}
