import Foundation

/// A string that is equal to another only when their UTF-8 bytes are, hashed and ordered
/// by those bytes.
///
/// Swift's `String` `==` and hashing treat canonically equivalent strings as equal: NFC
/// `"Café"` (U+00E9) equals NFD `"Cafe\u{301}"`. Azure compares names, keys and values by
/// their code units, so it stores both as different properties, rows or blobs. Wherever a
/// name, key or value is matched — a dictionary key, a set, a comparison — it goes through
/// this type or `String.isExactly(_:)`, never through `String ==`.
public struct ExactString: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var string: String

    public init(_ string: String) { self.string = string }
    public init(stringLiteral value: String) { string = value }

    public static func == (a: ExactString, b: ExactString) -> Bool { a.string.isExactly(b.string) }

    /// Byte order, which is also UTF-16 code unit order for text without surrogates.
    public static func < (a: ExactString, b: ExactString) -> Bool { a.string.utf8.lexicographicallyPrecedes(b.string.utf8) }

    public func hash(into hasher: inout Hasher) {
        var copy = string
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(0xFF as UInt8)  // never part of UTF-8: ends the bytes
    }

    public var description: String { string }
}

extension String {
    /// Whether the two strings hold the same UTF-8 bytes (Azure's equality; `==` is
    /// canonical equivalence).
    /// Compared as contiguous bytes (`memcmp`): the generic `utf8.elementsEqual` walked the
    /// views index by index and was a fifth of a whole `plan`.
    public func isExactly(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var a = self
        var b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }
}

extension String {
    /// The two strings' order by their UTF-8 bytes: negative, zero or positive. Azure's key
    /// order for text without surrogates; compared as contiguous bytes, as ``isExactly(_:)``.
    public func byteOrder(_ other: String) -> Int {
        var a = self
        var b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let n = min(x.count, y.count)
                let c = n == 0 ? 0 : Int(memcmp(x.baseAddress!, y.baseAddress!, n))
                return c != 0 ? c : x.count - y.count
            }
        }
    }
}
