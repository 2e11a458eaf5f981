import AzureStorage
import Foundation

/// A keyed 64-bit number for one property (its name's and value's bytes), for
/// ``ActionFingerprints``. An entity's properties are summed, so their order does not count
/// (two equal entities may list them in two orders). Cheaper than a `Hasher` per property:
/// a long text (an event's description, a kilobyte) is mixed eight bytes at a time.
///
/// It tells a changed entity from the one planned, keyed per process so that whoever edits a
/// dataset's files between apply's two passes cannot choose a change it misses; another
/// client's write shows as a changed ETag or a changed action.
enum PropertyFingerprint {
    /// Drawn once per process, as `Hasher`'s seed is: numbers are never kept or compared
    /// across processes.
    private static let key = UInt64.random(in: .min ... .max) | 1

    static func of(name: String, value: EdmValue) -> UInt64 {
        var h = key
        mix(name, into: &h)
        switch value {
        case .string(let v):
            mix(word: 1, into: &h)
            mix(v, into: &h)
        case .int32(let v): mix(word: 2 << 32 | UInt64(UInt32(bitPattern: v)), into: &h)
        case .int64(let v):
            mix(word: 3, into: &h)
            mix(word: UInt64(bitPattern: v), into: &h)
        case .double(let v):
            mix(word: 4, into: &h)
            mix(word: v.bitPattern, into: &h)
        case .boolean(let v): mix(word: v ? 5 << 32 | 1 : 5 << 32, into: &h)
        case .dateTime(let v):
            mix(word: 6, into: &h)
            mix(word: UInt64(bitPattern: v.ticks), into: &h)
        case .guid(let v):
            mix(word: 7, into: &h)
            withUnsafeBytes(of: v.uuid) { mix(bytes: $0, into: &h) }
        case .binary(let v):
            mix(word: 8, into: &h)
            v.withUnsafeBytes { mix(bytes: $0, into: &h) }
        }
        return finish(h)
    }

    private static func mix(_ text: String, into h: inout UInt64) {
        var text = text
        text.withUTF8 { mix(bytes: UnsafeRawBufferPointer($0), into: &h) }
    }

    /// The bytes eight at a time, then the rest and the length: "ab" and "a" then "b" differ.
    private static func mix(bytes: UnsafeRawBufferPointer, into h: inout UInt64) {
        var i = 0
        while i + 8 <= bytes.count {
            mix(word: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self), into: &h)
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.count {
            tail |= UInt64(bytes[i]) << shift
            shift += 8
            i += 1
        }
        mix(word: tail, into: &h)
        mix(word: UInt64(bytes.count), into: &h)
    }

    /// The state and the word multiplied by a per-process odd number into 128 bits, folded
    /// back to 64. (A 64-bit multiply and xorshift let one flipped top bit, then a matching
    /// flip in the next word, cancel out whatever the key: an attacker's review changed a
    /// GUID in a dataset file between apply's passes and it was written.)
    @inline(__always) private static func mix(word: UInt64, into h: inout UInt64) {
        let product = (h ^ word).multipliedFullWidth(by: multiplier)
        h = product.high ^ product.low
    }

    private static let multiplier = UInt64.random(in: .min ... .max) | 1

    /// The last bits mixed into all of them (murmur3's finaliser).
    private static func finish(_ h: UInt64) -> UInt64 {
        var h = h ^ (h >> 33)
        h = h &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        return h ^ (h >> 33)
    }
}
