import Foundation
import PropertyBased
import Testing

@testable import AzureStorage
@testable import StorageProtocol

/// The byte-level fast paths (eight bytes at a time, libc's memmem) agree with the plain
/// byte-by-byte definitions they replace, wherever a special byte falls in a word.
@Suite struct ByteScanTests {
    /// Text of `length` bytes, mostly letters, with specials at places the seed picks.
    static func text(seed: Int, length: Int) -> String {
        let specials: [UInt8] = [0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x01, 0x1F, 0x7F, 0x20, 0x21, 0x5B, 0x5D]
        var state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 | 1
        var bytes: [UInt8] = []
        for _ in 0..<length {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes.append(state % 7 == 0 ? specials[Int(state >> 8) % specials.count] : UInt8(97 + state % 26))
        }
        return String(decoding: bytes, as: UTF8.self) + (seed % 3 == 0 ? "é中😀" : "")
    }

    /// JSON string escaping as defined, one byte at a time.
    static func reference(_ s: String) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for b in s.utf8 {
            switch b {
            case 0x22, 0x5C: out += [0x5C, b]
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0..<0x20, 0x7F: out += Array(String(format: "\\u%04x", b).utf8)
            default: out.append(b)
            }
        }
        return out + [0x22]
    }

    @Test func escapingReadingAndSizingAgreeWithTheDefinitions() async {
        await propertyCheck(input: Gen.int(in: 0...Int.max), Gen.int(in: 0...40)) { seed, length in
            let s = Self.text(seed: seed, length: length)
            var out: [UInt8] = []
            JSONText.appendString(s, to: &out)
            #expect(out == Self.reference(s), "seed \(seed)")
            #expect(JSONText.encodedLengthBound(s) >= out.count)
            #expect((try? JSONParser.parse(out)) == .string(s))
            let entity = TableEntity(
                partitionKey: s, rowKey: "r", properties: [s.isEmpty ? "n" : "n\(length)": .string(s), "d": .double(-2.2250738585072014e-308)])
            #expect(EntityJSONEncoder.encodedLengthBound(entity) >= EntityJSONEncoder.encode(entity).count)
        }
    }

    @Test func findAndLineEndingsAgreeWithTheDefinitions() async {
        await propertyCheck(input: Gen.int(in: 0...Int.max), Gen.int(in: 0...60)) { seed, length in
            let hay = Array(Self.text(seed: seed, length: length).utf8)
            let needle = Array("\r\n".utf8)
            let from = length == 0 ? 0 : seed % (length + 1)
            let naive = (from..<max(from, hay.count - 1)).first { hay[$0] == 0x0D && hay[$0 + 1] == 0x0A }
            #expect(MultipartBytes.find(needle, in: hay[...], from: from) == naive)
            // A slice that does not start at 0 keeps its indices.
            if hay.count > 4 { #expect(MultipartBytes.find([hay[3]], in: hay[2...], from: 3) == 3) }
            var expected: [UInt8] = []
            for (i, b) in hay.enumerated() where !(b == 0x0D && i + 1 < hay.count && hay[i + 1] == 0x0A) { expected.append(b) }
            #expect(MultipartBytes.withoutCarriageReturns(Data(hay)) == expected)
        }
    }
}
