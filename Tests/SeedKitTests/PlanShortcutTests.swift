import AzureStorage
import Foundation
import PropertyBased
import Testing

@testable import SeedKit

/// Issue 51, a plan's cost per entity: each shortcut gives what the way it replaced gave.
@Suite struct PlanShortcutTests {
    static let names = ["A", "B", "Bio", "EventDate", "EventDescription", "Name", "a", "b\u{E9}", "e\u{301}", "\u{E9}", "Z9"]

    static func value(_ seed: UInt64, _ length: Int) -> EdmValue {
        switch seed % 6 {
        case 0: .string(String(repeating: "x\u{E9}", count: length) + String(seed))
        case 1: .int32(Int32(truncatingIfNeeded: seed))
        case 2: .int64(Int64(bitPattern: seed))
        case 3: .double(Double(seed) / 7)
        case 4: .dateTime(EdmDateTime(ticks: Int64(seed % 1_000_000_000)))
        default: .binary(Array(String(seed).utf8))
        }
    }

    /// An entity whose properties are inserted in the order `order` gives.
    static func entity(_ pairs: [(String, EdmValue)], order: [Int]) -> TableEntity {
        var entity = TableEntity(partitionKey: "p", rowKey: "r")
        for i in order { entity.properties[pairs[i].0] = pairs[i].1 }
        return entity
    }

    @Test func aFingerprintDoesNotDependOnTheOrderPropertiesWereMadeIn() async {
        await propertyCheck(input: Gen.int(in: 1...Self.names.count), Gen.uint64(in: 0...UInt64.max), Gen.int(in: 0...300)) {
            count, seed, length in
            let pairs = (0..<count).map { (Self.names[$0], Self.value(seed &+ UInt64($0), length)) }
            var random = SeedRandom(seed: seed)
            let shuffled = Array(0..<count).shuffled(using: &random)
            let a = EntityAction(table: "t", kind: "k", creating: Self.entity(pairs, order: Array(0..<count)), naturalKeyFields: [])
            let b = EntityAction(table: "t", kind: "k", creating: Self.entity(pairs, order: shuffled), naturalKeyFields: [])
            #expect(ActionFingerprints.of(a) == ActionFingerprints.of(b))
        }
    }

    /// A long text changed in one byte, anywhere (in a full eight-byte word or in the tail),
    /// or made one byte longer, is another fingerprint.
    @Test func aFingerprintTellsATextChangedInOneByte() async {
        await propertyCheck(input: Gen.int(in: 1...1_200), Gen.uint64(in: 0...UInt64.max)) { length, seed in
            let text = Array(repeating: UInt8(ascii: "a"), count: length)
            var changed = text
            changed[Int(seed % UInt64(length))] = UInt8(ascii: "b")
            func fingerprint(_ bytes: [UInt8]) -> Int {
                var entity = TableEntity(partitionKey: "p", rowKey: "r")
                entity.properties["Text"] = .string(String(decoding: bytes, as: UTF8.self))
                return ActionFingerprints.of(EntityAction(table: "t", kind: "k", creating: entity, naturalKeyFields: []))
            }
            #expect(fingerprint(text) != fingerprint(changed))
            #expect(fingerprint(text) != fingerprint(text + [0]))
        }
    }

    /// From an attacker's review: with a 64-bit multiply and xorshift, the top bit of one word
    /// flipped and bits 63 and 34 of the next flipped cancelled out for every key, so a GUID
    /// (or bytes) edited that way in a dataset file between apply's passes was written.
    @Test func aFingerprintTellsApartTheChangeThatCancelledOut() async {
        await propertyCheck(input: Gen.uint64(in: 0...UInt64.max), Gen.uint64(in: 0...UInt64.max)) { a, b in
            var bytes = withUnsafeBytes(of: a.littleEndian) { Array($0) } + withUnsafeBytes(of: b.littleEndian) { Array($0) }
            func fingerprint(_ value: EdmValue) -> Int {
                var entity = TableEntity(partitionKey: "p", rowKey: "r")
                entity.properties["Ref"] = value
                return ActionFingerprints.of(EntityAction(table: "t", kind: "k", creating: entity, naturalKeyFields: []))
            }
            func guid(_ bytes: [UInt8]) -> EdmValue {
                .guid(
                    UUID(
                        uuid: (
                            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                        )))
            }
            let before = (guid(bytes), EdmValue.binary(bytes))
            bytes[7] ^= 0x80  // bit 63 of the first word
            bytes[15] ^= 0x80  // bit 63 of the second
            bytes[12] ^= 0x04  // bit 34 of the second
            #expect(fingerprint(before.0) != fingerprint(guid(bytes)))
            #expect(fingerprint(before.1) != fingerprint(.binary(bytes)))
        }
    }

    /// Two names that are canonically equivalent but not the same bytes are two properties.
    @Test func aFingerprintTellsNamesApartByTheirBytes() {
        var nfc = TableEntity(partitionKey: "p", rowKey: "r")
        nfc.properties["\u{E9}"] = .int32(1)
        var nfd = TableEntity(partitionKey: "p", rowKey: "r")
        nfd.properties["e\u{301}"] = .int32(1)
        let a = EntityAction(table: "t", kind: "k", creating: nfc, naturalKeyFields: [])
        let b = EntityAction(table: "t", kind: "k", creating: nfd, naturalKeyFields: [])
        #expect(ActionFingerprints.of(a) != ActionFingerprints.of(b))
    }

    @Test func propertiesSortedByNameAreInByteOrder() async {
        await propertyCheck(input: Gen.int(in: 0...Self.names.count), Gen.uint64(in: 0...UInt64.max)) { count, seed in
            var random = SeedRandom(seed: seed)
            let chosen = Array(Self.names.shuffled(using: &random).prefix(count))
            var properties = EntityProperties()
            for name in chosen { properties[name] = .string(name) }
            let sorted = properties.sortedByName
            #expect(sorted.map(\.name) == chosen.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            #expect(sorted.allSatisfy { pair in pair.value == .string(pair.name) })
        }
    }

    /// A create's natural key is made from its entity when asked, as it was made when planned.
    @Test func aCreatesNaturalKeyIsItsEntitysKeyFields() {
        var entity = TableEntity(partitionKey: "p", rowKey: "r")
        entity.properties["Name"] = .string("Ann")
        entity.properties["Day"] = .dateTime(EdmDateTime(ticks: 0))
        let action = EntityAction(table: "t", kind: "k", creating: entity, naturalKeyFields: ["Name", "Missing", "Day"])
        #expect(action.naturalKey.map(\.0) == ["Name", "Day"])
        #expect(action.naturalKey.map(\.1) == ["Ann", EdmValue.dateTime(EdmDateTime(ticks: 0)).text])
        var stated = action
        stated.naturalKey = [("Name", "Bo")]
        #expect(stated.naturalKey.map(\.1) == ["Bo"])
    }
}

/// The project's own generator, for shuffles.
extension SeedRandom: RandomNumberGenerator {}
