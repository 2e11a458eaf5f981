import AzureStorage

/// An entity as the generator makes it: keys plus values aligned with its kind's sorted
/// stored property names. Cheaper than a dictionary when a million are streamed.
public struct GeneratedEntity: Sendable {
    public var partitionKey: String
    public var rowKey: String
    /// Stored property names, sorted byte-wise (shared by every entity of a kind).
    public var names: [String]
    /// Values aligned with ``names``.
    public var values: [EdmValue]

    /// The entity as a client-library value.
    public var tableEntity: TableEntity {
        var properties = EntityProperties(minimumCapacity: names.count)
        for (name, value) in zip(names, values) { properties[name] = value }
        return TableEntity(partitionKey: partitionKey, rowKey: rowKey, properties: properties)
    }
}

/// A RowKey as 128 bits, ordered like its lowercase UUID text.
struct RowKeyBits: Sendable, Hashable, Comparable {
    var high: UInt64
    var low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init(_ bytes: some Sequence<UInt8>) {
        var h: UInt64 = 0
        var l: UInt64 = 0
        for (i, b) in bytes.prefix(16).enumerated() {
            if i < 8 { h = h << 8 | UInt64(b) } else { l = l << 8 | UInt64(b) }
        }
        high = h
        low = l
    }

    static func < (a: RowKeyBits, b: RowKeyBits) -> Bool { a.high != b.high ? a.high < b.high : a.low < b.low }

    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lowercase.
    var text: String {
        String(unsafeUninitializedCapacity: 36) { out in
            var pos = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    out[pos] = UInt8(ascii: "-")
                    pos += 1
                }
                let word = nibble < 16 ? high : low
                let digit = UInt8(truncatingIfNeeded: (word >> UInt64(60 - (nibble % 16) * 4)) & 0xF)
                out[pos] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
                pos += 1
            }
            return 36
        }
    }
}
