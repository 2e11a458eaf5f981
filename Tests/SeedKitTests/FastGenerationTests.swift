import AzseedTestSupport
import AzureStorage
import Foundation
import PropertyBased
import Testing

@testable import SeedKit

/// Issue 51, generation at a million events a second: each shortcut makes exactly what the
/// way it replaced made. The golden snapshot pins 100 events; these reach the sizes where the
/// shortcuts take over (several chunks, the bucket sort, both cores).
@Suite struct FastGenerationTests {
    /// A kind keyed by an int range that crosses zero, a day and a pick, with a template over
    /// a pick and a ref: every kind of key piece and of numbered template input.
    static func mixedDataset() throws -> Dataset {
        let folder = try Scratch.folder()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("templates"), withIntermediateDirectories: true)
        try "{{Colour}} by {{owner.Name}}".write(to: folder.appendingPathComponent("templates/label.mustache"), atomically: true, encoding: .utf8)
        let yaml = """
            name: mixed
            seed: 3
            window: { from: 2026-01-01, days: 400 }
            tables:
              - name: things
                kinds:
                  - name: person
                    partition: people
                    key: [Name]
                    rows:
                      - { Name: Ann }
                      - { Name: Bo }
                      - { Name: Cy }
                  - name: thing
                    partition: things
                    count: 9000
                    key: [Level, Day, Colour]
                    fields:
                      Level: { int: [-50, 50] }
                      Day: { date: window, resolution: day }
                      Colour: { pick: [red, green, blue, a colour whose name is longer than fifteen bytes] }
                      owner: { ref: person }
                      Label: { template: label.mustache }
                      Big: { int: [-9000000000, 9000000000] }
            """
        try yaml.write(to: folder.appendingPathComponent("dataset.yaml"), atomically: true, encoding: .utf8)
        return try Dataset.load(directory: folder)
    }

    static func engine(_ dataset: Dataset, kind: String, options: GenerationOptions) throws -> (DesiredTable, KindEngine) {
        let made = try GeneratedDataset.make(dataset, options: options)
        for table in made.tables {
            if let engine = table.engines.first(where: { $0.spec.name == kind }) { return (table, engine) }
        }
        throw GenerationError("no kind \(kind)")
    }

    @Test func keysHashedPerThreadAreTheEnginesKeys() async throws {
        let speakEasy = try Dataset.load(directory: TestSupport.speakeasy)
        let mixed = try Self.mixedDataset()
        for (dataset, kind) in [(speakEasy, "event"), (mixed, "thing")] {
            let (_, engine) = try Self.engine(dataset, kind: kind, options: TestSupport.options())
            let capacity = try #require(engine.keySpace?.capacity)
            var hasher = try #require(KeyIndexHasher(engine: engine))
            var builder = EntityBuilder(engine: engine)
            await propertyCheck(input: Gen.uint64(in: 0...UInt64(min(capacity - 1, UInt128(UInt64.max))))) { index in
                #expect(hasher.rowKey(UInt128(index)) == builder.keyFromSpace(UInt128(index)), "\(kind), key index \(index)")
            }
        }
    }

    @Test func chunksBuiltOnEveryCoreAreWhatOneBuilderMakes() throws {
        let speakEasy = try Dataset.load(directory: TestSupport.speakeasy)
        for (dataset, kind, options) in [
            (speakEasy, "event", TestSupport.options(seed: 5, events: 9_001)), (try Self.mixedDataset(), "thing", TestSupport.options()),
        ] {
            let (table, engine) = try Self.engine(dataset, kind: kind, options: options)
            let identities = try engine.sortedIdentities(datasetFile: "dataset.yaml")
            #expect(identities.count > 4 * ChunkedBuild.chunkSize)
            var alone = EntityBuilder(engine: engine)
            var made: [GeneratedEntity] = []
            try table.forEachEntity(ofKind: kind) { made.append($0) }
            #expect(made.count == identities.count)
            for (ordinal, item) in identities.enumerated() where ordinal < made.count {
                let one = try alone.build(identity: item.identity, ordinal: ordinal, index: item.index, rowKey: item.rowKey)
                #expect(made[ordinal].rowKey == one.rowKey && made[ordinal].names == one.names && made[ordinal].values == one.values)
            }
        }
    }

    @Test func aCachedTemplateTextIsItsOwnEntitys() throws {
        // The numbered cache answers by which entries the inputs took: each event's
        // description must still begin with its own name, place and speaker.
        let dataset = try Dataset.load(directory: TestSupport.speakeasy)
        let (table, _) = try Self.engine(dataset, kind: "event", options: TestSupport.options(seed: 11, events: 20_000))
        var checked = 0
        try table.forEachEntity(ofKind: "event") { event in
            let expected = "\(event["EventName"]!.text) in \(event["EventLocation"]!.text) with \(event["SpeakerName"]!.text)."
            #expect(event["EventDescription"]!.text.hasPrefix(expected))
            checked += 1
        }
        #expect(checked == 20_000)
        let (mixedTable, _) = try Self.engine(try Self.mixedDataset(), kind: "thing", options: TestSupport.options())
        let people = try TestSupport.entities(mixedTable).filter { $0.partitionKey == "people" }
        try mixedTable.forEachEntity(ofKind: "thing") { thing in
            let label = thing["Label"]!.text
            #expect(people.contains { label == "\(thing["Colour"]!.text) by \($0["Name"]!.text)" }, "\(label)")
        }
    }

    @Test func theBucketSortIsTheStandardSort() async {
        await propertyCheck(input: Gen.int(in: 0...20_000), Gen.int(in: 1...64), Gen.uint64(in: 0...UInt64.max)) { count, spread, seed in
            // Few distinct top bits (crowded buckets) and repeated RowKeys (stability) included.
            var random = SeedRandom(seed: seed)
            var items = (0..<count).map { i in
                Identity(
                    rowKey: RowKeyBits(high: random.below(UInt64(spread)) << 58 | random.below(4), low: random.below(3)),
                    identity: UInt128(i), index: i)
            }
            var expected = items
            expected.sort { $0.rowKey < $1.rowKey }
            IdentitySort.sort(&items)
            #expect(items.map(\.index) == expected.map(\.index))
        }
    }

    @Test func theDrawnIndexSetIsASet() async {
        await propertyCheck(input: Gen.int(in: 1...5_000), Gen.uint64(in: 0...UInt64.max)) { count, seed in
            var random = SeedRandom(seed: seed)
            var fast = DrawnIndexSet(count: count)
            var set = Set<UInt128>()
            for _ in 0..<(count * 2) {
                // Small values collide often; wide ones exercise the high word.
                let value = random.below(2) == 0 ? UInt128(random.below(UInt64(count))) : UInt128(random.next()) << 64 | UInt128(random.below(4))
                #expect(fast.insert(value) == set.insert(value).inserted)
            }
        }
    }
}
