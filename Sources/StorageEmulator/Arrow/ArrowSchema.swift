/// The Arrow column types the emulator writes: what Query Blob Contents' `ArrowConfiguration`
/// offers (int64, bool, timestamp[ms], string, double, decimal) and what List Blobs' Arrow
/// answer uses besides (a string-to-string map for metadata and tags).
enum ArrowType: Equatable, Sendable {
    case int64
    case bool
    case timestampMilliseconds
    case utf8
    case double
    case decimal128(precision: Int32, scale: Int32)
    /// `map<utf8, utf8>`: entries of a key and a nullable value.
    case stringMap
}

/// One column of a schema.
struct ArrowField: Equatable, Sendable {
    var name: String
    var type: ArrowType
    var nullable = true
}

/// One cell. A cell's case matches its column's type; ``ArrowStreamWriter`` writes a mismatched
/// cell as null (its callers never make one).
enum ArrowValue: Equatable, Sendable {
    case null
    /// int64, and timestamp[ms] (milliseconds since 1970, UTC).
    case integer(Int64)
    case bool(Bool)
    case double(Double)
    case utf8([UInt8])
    /// A decimal's unscaled value.
    case decimal(Int128)
    case map([(key: [UInt8], value: [UInt8]?)])

    static func == (a: ArrowValue, b: ArrowValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.integer(let x), .integer(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.double(let x), .double(let y)): x.bitPattern == y.bitPattern
        case (.utf8(let x), .utf8(let y)): x == y
        case (.decimal(let x), .decimal(let y)): x == y
        case (.map(let x), .map(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }
}
