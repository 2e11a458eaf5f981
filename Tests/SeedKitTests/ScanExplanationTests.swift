import AzureStorage
import Foundation
import PropertyBased
import Testing

@testable import SeedKit

/// Issue 50, "the simplest explanation wins", on the accounts an outside test measured.
@Suite struct ScanExplanationTests {
    static func infer(_ entities: [TableEntity], copyValues: Bool) -> InferredDataset {
        var partitions: [String: PartitionObservation] = [:]
        for e in entities {
            partitions[e.partitionKey, default: PartitionObservation(table: "fleet", partition: e.partitionKey, sampleSize: 20)].observe(e)
        }
        return DatasetInference.infer(
            ScanInput(
                name: "s", source: "test", blobEndpoint: "", containers: [], partitions: Array(partitions.values), sample: 20, copiedBlobs: false,
                copyValues: copyValues))
    }

    /// Readings in NO, SE and DK, each with a gap-free Seq 1…n: every SE and DK Seq exists in NO
    /// (the longest), which once made them references to NO's Seq, keyed by TakenAt instead.
    @Test func aGapFreeSequenceIsASequenceBeforeItIsAReference() {
        var entities: [TableEntity] = []
        for (country, n) in [("NO", 630), ("SE", 413), ("DK", 300)] {
            for i in 0..<n {
                var e = TableEntity(partitionKey: country, rowKey: String(format: "%05d", i))
                e["Seq"] = .int64(Int64(i + 1))
                e["TakenAt"] = .dateTime(
                    EdmDateTime(ticks: EdmDateTime(year: 2026, month: 1, day: 1).ticks + Int64(i * 7 + n) * EdmDateTime.ticksPerMinute))
                e["Value"] = .double(Double(i % 50) / 7 + 0.73)
                entities.append(e)
            }
        }
        for copyValues in [true, false] {
            let yaml = Self.infer(entities, copyValues: copyValues).yaml
            #expect(!yaml.contains("{ ref:"), "\(yaml)")
            #expect(yaml.components(separatedBy: "key: [Seq]").count == 4, "\(yaml)")
            #expect(yaml.components(separatedBy: "Seq: { sequence: { start: 1, step: 1 }, type: Edm.Int64 }").count == 4, "\(yaml)")
        }
        // Without copied values the range of Value is rounded outward to the double nearest its
        // decimal: 0.7, never 0.7000000000000001.
        let yaml = Self.infer(entities, copyValues: false).yaml
        #expect(yaml.contains("Value: { double: [0.7, 8.0]"), "\(yaml)")
        #expect(!yaml.contains("0000000001"), "\(yaml)")
    }

    /// A new user's orders: an OrderNo sequence keys them, not the e-mail or invoice URL as
    /// numbered text; and the customer's name has one note, not two that disagree.
    @Test func aNaturalKeyBeforeNumberedTextAndOneNotePerField() {
        var entities: [TableEntity] = []
        for i in 0..<40 {
            var e = TableEntity(partitionKey: "orders", rowKey: "o\(i)")
            e["OrderNo"] = .int32(Int32(5001 + i))
            e["Email"] = .string("buyer\(i)@shop.example.com")
            e["InvoiceUrl"] = .string("https://shop.example.com/invoices/\(9000 + i)")
            e["Name"] = .string(
                ["Ada", "Bo", "Cy", "Di"][i / 10] + " " + ["Novak", "Berg", "Lund", "Holm", "Dahl", "Moe", "Strand", "Vik", "Aas", "Lie"][i % 10])
            e["PlacedAt"] = .dateTime(
                EdmDateTime(ticks: EdmDateTime(year: 2026, month: 3, day: 1).ticks + Int64(i) * 3_600 * EdmDateTime.ticksPerSecond))
            entities.append(e)
        }
        let inferred = Self.infer(entities, copyValues: false)
        #expect(inferred.yaml.contains("key: [OrderNo]"), "\(inferred.yaml)")
        for field in ["Name", "Email", "InvoiceUrl", "OrderNo"] {
            let notes = inferred.summary.filter { $0.hasPrefix("orders.\(field) ") }
            #expect(notes.count <= 1, "\(notes)")
        }
        #expect(inferred.yaml.contains("Name: { fake: name, unique: true }"), "\(inferred.yaml)")
        #expect(inferred.yaml.contains("Email: { fake: email, unique: true }"), "\(inferred.yaml)")
        // A unique URL that does not key: URLs of its shape, numbered (never "1", "2", …).
        #expect(inferred.yaml.contains("InvoiceUrl: { template: order-InvoiceUrl.mustache }"), "\(inferred.yaml)")
        #expect(inferred.templates.contains { $0.text == "https://example.com/InvoiceUrl/{{InvoiceUrlNumber}}" })
    }
}

/// Found by a new user: a key of one property was explained as "these together", and a column
/// holding Int64s among Int32s lost them without a word.
@Suite struct ScanNoteTests {
    @Test func eachNoteSaysWhatTheDatasetDoes() {
        var entities: [TableEntity] = []
        for i in 0..<3 {
            var e = TableEntity(partitionKey: "few", rowKey: "r\(i)")
            e["V"] = .int32(5)
            entities.append(e)
        }
        for i in 0..<25 {
            var e = TableEntity(partitionKey: "many", rowKey: String(format: "%04d", i))
            e["Visits"] = i < 5 ? .int64(20_000_000_000_000 + Int64(i)) : .int32(Int32(i))
            entities.append(e)
        }
        let inferred = ScanExplanationTests.infer(entities, copyValues: false)
        #expect(!inferred.yaml.contains("key: [V]   # no property alone"), "\(inferred.yaml)")
        #expect(inferred.summary.contains { $0.hasPrefix("many.Visits is Edm.Int32 but holds Edm.Int64 in 5 of 25: generated as Edm.Int32") })
        #expect(inferred.summary.contains { $0.hasPrefix("many: RowKeys are not GUIDs, but a generated kind's are") })
    }
}

/// Partitions are told apart by their bytes, as Azure keeps them: `é` and `e` + U+0301 are two
/// kinds (Swift's `==` once merged them into one partition of both's entities).
@Suite struct ScanPartitionBytesTests {
    @Test func twoKeysSwiftCallsEqualAreTwoPartitions() {
        var observations = PartitionObservations(sampleSize: 20)
        for (pk, n) in [("\u{E9}", 6), ("e\u{301}", 7)] {
            for i in 0..<n {
                var e = TableEntity(partitionKey: pk, rowKey: "r\(i)")
                e["N"] = .int32(Int32(i))
                observations.observe(e, table: "things")
            }
        }
        let all = observations.all()
        #expect(all.count == 2 && Set(all.map(\.count)) == [6, 7])
        let yaml = DatasetInference.infer(
            ScanInput(name: "s", source: "t", blobEndpoint: "", containers: [], partitions: all, sample: 20, copiedBlobs: false, copyValues: true)
        ).yaml
        #expect(yaml.components(separatedBy: "      - name: ").count == 3, "\(yaml)")
    }

    @Test func aGUIDIsToldByItsBytes() {
        #expect(PartitionObservation.isGUID("03412383-1364-5bba-a174-9bd2240635bc"))
        #expect(PartitionObservation.isGUID("03412383-1364-5BBA-A174-9BD2240635BC"))
        #expect(!PartitionObservation.isGUID("03412383-1364-5bba-a174-9bd2240635b"))
        #expect(!PartitionObservation.isGUID("03412383x1364-5bba-a174-9bd2240635bc"))
        #expect(!PartitionObservation.isGUID("0341238g-1364-5bba-a174-9bd2240635bc"))
    }
}

/// Each property's statistics are the entities' own, whatever order and set of properties each
/// entity has: no observation is credited to another property.
@Suite struct PropertySlotTests {
    @Test func presenceIsCountedPerPropertyWhateverTheOrder() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SeedRandom(seed: UInt64(seed))
            var observation = PartitionObservation(table: "things", partition: "p", sampleSize: 5)
            var expected: [String: Int] = [:]
            for i in 0..<60 {
                var properties = EntityProperties()
                let order = ["A", "B", "C", "D", "E"].map { ($0, random.next()) }.sorted { $0.1 < $1.1 }.map(\.0)
                for name in order where random.below(3) != 0 {
                    properties[name] = .int32(Int32(i))
                    expected[name, default: 0] += 1
                }
                observation.observe(TableEntity(partitionKey: "p", rowKey: "r\(i)", properties: properties))
            }
            for (name, count) in expected { #expect(observation.property(name)?.present == count, "seed \(seed), \(name)") }
            #expect(observation.propertyNames.count == expected.count)
        }
    }
}
