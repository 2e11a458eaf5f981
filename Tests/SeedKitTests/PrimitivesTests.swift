import AzureStorage
import Foundation
import Testing

@testable import SeedKit

@Suite struct PrimitivesTests {
    @Test func splitMix64MatchesTheReferenceOutputs() {
        // Reference values of Vigna's splitmix64.c for seed 1234567.
        var random = SeedRandom(seed: 1_234_567)
        #expect([random.next(), random.next(), random.next()] == [6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423])
    }

    @Test func boundedDrawsStayInRangeAndCoverIt() {
        var random = SeedRandom(seed: 5)
        var seen = Set<UInt64>()
        for _ in 0..<10_000 {
            let v = random.below(7)
            #expect(v < 7)
            seen.insert(v)
        }
        #expect(seen.count == 7)
        for _ in 0..<1_000 {
            let u = random.unit()
            #expect(u >= 0 && u < 1)
            #expect(random.upTo(UInt128(UInt64.max) * 3) <= UInt128(UInt64.max) * 3)
        }
    }

    @Test func floydSamplingGivesDistinctIndices() {
        var random = SeedRandom(seed: 11)
        var picked: [UInt128] = []
        KeySpace.sample(count: 1_000, capacity: 1_000, random: &random) { picked.append($0) }
        #expect(Set(picked) == Set((0..<1_000).map { UInt128($0) }))
    }

    @Test func nameUUIDMatchesRFC4122() {
        // Python: uuid.uuid5(uuid.NAMESPACE_DNS, "python.org")
        let dns = UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8")!
        #expect(NameUUID.make(namespace: dns, name: Array("python.org".utf8)).uuidString.lowercased() == "886313e1-3b8a-5372-9b90-0c9aee199e5d")
    }

    @Test func rowKeyTextMatchesUUIDText() {
        let uuid = UUID(uuidString: "886313E1-3B8A-5372-9B90-0C9AEE199E5D")!
        let bits = withUnsafeBytes(of: uuid.uuid) { RowKeyBits($0) }
        #expect(bits.text == "886313e1-3b8a-5372-9b90-0c9aee199e5d")
    }

    @Test func entityJSONIsCanonical() {
        let entity = TableEntity(
            partitionKey: "p\"1", rowKey: "r",
            properties: [
                "b": .int64(1_099_511_627_776), "a": .double(2), "c": .double(.nan), "d": .boolean(true), "e": .int32(-3),
                "f": .dateTime(EdmDateTime(iso8601: "2024-01-02T03:04:05Z")!), "g": .guid(UUID(uuidString: "12345678-1234-5678-1234-567812345678")!),
                "h": .binary([1, 2, 3]), "i": .string("line\nbreak é"),
            ])
        let json = String(decoding: EntityJSONEncoder.encode(entity), as: UTF8.self)
        #expect(
            json
                == #"{"PartitionKey":"p\"1","RowKey":"r","a":2.0,"a@odata.type":"Edm.Double","b":"1099511627776","b@odata.type":"Edm.Int64","c":"NaN","c@odata.type":"Edm.Double","d":true,"e":-3,"f":"2024-01-02T03:04:05.0000000Z","f@odata.type":"Edm.DateTime","g":"12345678-1234-5678-1234-567812345678","g@odata.type":"Edm.Guid","h":"AQID","h@odata.type":"Edm.Binary","i":"line\nbreak é"}"#
        )
    }
}
