import AzureStorage
import Crypto

/// The RowKeys of a generated kind's key indices (``NaturalKey``'s layout, byte for byte),
/// made on several threads at once.
///
/// Each thread gets its own hasher: every byte and number the hash reads is copied into it
/// as plain values, so making a key touches no reference count another thread also touches.
/// Hashing through the kind's engine shared those counts, and two threads were barely faster
/// than one. Kinds whose key fields are not all pick lists, refs, constants, dates or ints go
/// the engine's way (``EntityBuilder/keyFromSpace(_:)``).
struct KeyIndexHasher {
    /// How one key field's piece is made.
    private struct Part {
        enum Kind { case table, constant, date, int32, int64 }
        var kind: Kind
        /// The key-space component whose digit decides the piece (table, date, int).
        var component: Int
        /// `bytes[start..<end]`: a constant piece, or a computed field's `Name=Edm.Type:`.
        var start: Int
        var end: Int
        /// Table pieces: `offsets[first + digit] ..< offsets[first + digit + 1]` in `bytes`.
        var first: Int
        /// Dates: ticks of digit 0 and between digits; ints: the value of digit 0.
        var base: Int64
        var step: Int64
        /// Dates: the days the grid spans, when ``dayTexts`` holds them (from `dayStart` on).
        var days: ClosedRange<Int64>? = nil
        var dayStart = 0
    }

    private var sizes: [UInt128]
    /// ``sizes`` as 64-bit integers, when each fits.
    private var narrowSizes: [UInt64]?
    private var bytes: [UInt8] = []
    private var offsets: [Int] = []
    private var parts: [Part] = []
    private var prefixEnd = 0
    private var input: [UInt8] = []
    private var text: [UInt8] = []
    /// `yyyy-mm-ddT` of each day date parts span (11 bytes a day), in ``Part/days`` order.
    private var dayTexts: [UInt8] = []

    /// A hasher of `engine`'s keys, or nil when one of its key fields is made otherwise.
    init?(engine: KindEngine) {
        guard let keySpace = engine.keySpace, keySpace.components.count <= 8 else { return nil }
        sizes = keySpace.components.map(\.size)
        narrowSizes = sizes.allSatisfy { $0 <= UInt128(UInt64.max) } ? sizes.map { UInt64($0) } : nil
        bytes.append(contentsOf: engine.naturalKey.prefix)
        prefixEnd = bytes.count
        for (position, piece) in engine.keyPieces.enumerated() {
            switch piece {
            case .table(let component, let pieces):
                let first = offsets.count
                for p in pieces {
                    offsets.append(bytes.count)
                    bytes.append(contentsOf: p)
                }
                offsets.append(bytes.count)
                parts.append(Part(kind: .table, component: component, start: 0, end: 0, first: first, base: 0, step: 0))
            case .constant(let p):
                let start = bytes.count
                bytes.append(contentsOf: p)
                parts.append(Part(kind: .constant, component: 0, start: start, end: bytes.count, first: 0, base: 0, step: 0))
            case .computed(let slot):
                let name = engine.spec.key[position]
                let start = bytes.count
                switch engine.ops[slot - engine.columnCount] {
                case .date(let first, let step, let count, let key?):
                    bytes.append(contentsOf: NaturalKey.header(field: name, type: .dateTime))
                    var part = Part(kind: .date, component: key, start: start, end: bytes.count, first: 0, base: first, step: step)
                    // A grid within Azure's range spanning up to about 270 years of days.
                    let last = Int128(first) + Int128(count &- 1) * Int128(step)
                    let perDay: Int64 = 864_000_000_000
                    if first >= 0, count > 0, last < Int128(EdmDateTime.endOfRange.ticks), (last - Int128(first)) / Int128(perDay) < 100_000 {
                        let days = (first / perDay)...(Int64(last) / perDay)
                        part.days = days
                        part.dayStart = dayTexts.count
                        for day in days {
                            let before = dayTexts.count
                            EdmDateTime(ticks: day * perDay).appendISO8601(to: &dayTexts)
                            dayTexts.removeLast(dayTexts.count - before - 11)
                        }
                    }
                    parts.append(part)
                case .int(let min, _, let type, let key?) where type == .int32 || type == .int64:
                    bytes.append(contentsOf: NaturalKey.header(field: name, type: type))
                    parts.append(
                        Part(kind: type == .int32 ? .int32 : .int64, component: key, start: start, end: bytes.count, first: 0, base: min, step: 1))
                default:
                    return nil
                }
            }
        }
        input.reserveCapacity(256)
        text.reserveCapacity(64)
    }

    /// The RowKey of key index `index`.
    mutating func rowKey(_ index: UInt128) -> RowKeyBits {
        input.removeAll(keepingCapacity: true)
        bytes.withUnsafeBufferPointer { bytes in
            input.append(contentsOf: bytes[0..<prefixEnd])
            var rest = index
            var digits: (UInt128, UInt128, UInt128, UInt128, UInt128, UInt128, UInt128, UInt128) = (0, 0, 0, 0, 0, 0, 0, 0)
            let count = sizes.count
            withUnsafeMutableBytes(of: &digits) { raw in
                let d = raw.bindMemory(to: UInt128.self)
                if let narrow = narrowSizes, rest <= UInt128(UInt64.max) {
                    // 64-bit division: a 128-bit one costs several times as much.
                    var r = UInt64(rest)
                    for c in 0..<count {
                        d[c] = UInt128(r % narrow[c])
                        r /= narrow[c]
                    }
                    return
                }
                for c in 0..<count {
                    d[c] = rest % sizes[c]
                    rest /= sizes[c]
                }
            }
            for part in parts {
                let digit = withUnsafeBytes(of: digits) { $0.bindMemory(to: UInt128.self)[part.component] }
                switch part.kind {
                case .table:
                    let i = part.first + Int(digit)
                    input.append(contentsOf: bytes[offsets[i]..<offsets[i + 1]])
                case .constant:
                    input.append(contentsOf: bytes[part.start..<part.end])
                case .date:
                    appendDate(part.base + Int64(digit) * part.step, days: part.days, from: part.dayStart)
                    appendComputed(bytes[part.start..<part.end])
                case .int32, .int64:
                    text.removeAll(keepingCapacity: true)
                    Self.appendDecimal(Int128(part.base) + Int128(digit), to: &text)
                    appendComputed(bytes[part.start..<part.end])
                }
            }
        }
        return RowKeyBits(sha1Of: input)
    }

    /// ``text`` = the ISO 8601 text of `ticks` (``EdmDateTime/appendISO8601(to:)``'s), its
    /// `yyyy-mm-ddT` taken from a table of the days the field's grid spans, made once: key
    /// indices are drawn at random, so neighbours rarely share a day.
    private mutating func appendDate(_ ticks: Int64, days: ClosedRange<Int64>?, from dayStart: Int) {
        let perDay: Int64 = 864_000_000_000
        text.removeAll(keepingCapacity: true)
        guard let days, ticks >= 0 else {
            EdmDateTime(ticks: ticks).appendISO8601(to: &text)
            return
        }
        let day = ticks / perDay
        let at = dayStart + Int(day - days.lowerBound) * 11
        text.append(contentsOf: dayTexts[at..<(at + 11)])
        var rest = ticks - day * perDay
        let fraction = rest % 10_000_000
        rest /= 10_000_000
        Self.appendDigits(Int(rest / 3600), 2, &text)
        text.append(UInt8(ascii: ":"))
        Self.appendDigits(Int(rest / 60 % 60), 2, &text)
        text.append(UInt8(ascii: ":"))
        Self.appendDigits(Int(rest % 60), 2, &text)
        text.append(UInt8(ascii: "."))
        Self.appendDigits(Int(fraction), 7, &text)
        text.append(UInt8(ascii: "Z"))
    }

    /// `value` (not negative, below 10^width) in exactly `width` digits.
    private static func appendDigits(_ value: Int, _ width: Int, _ out: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// `header`, the length of ``text`` and a colon, ``text``, a NUL.
    private mutating func appendComputed(_ header: Slice<UnsafeBufferPointer<UInt8>>) {
        input.append(contentsOf: header)
        Self.appendDecimal(Int128(text.count), to: &input)
        input.append(UInt8(ascii: ":"))
        input.append(contentsOf: text)
        input.append(0)
    }

    /// `value` in decimal, as `String(value)` spells it.
    static func appendDecimal(_ value: Int128, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        // 64-bit division where the value fits: a 128-bit one costs several times as much.
        if let narrow = UInt64(exactly: value.magnitude) {
            appendDigits(of: narrow, to: &out)
        } else {
            appendDigits(of: value.magnitude, to: &out)
        }
    }

    /// `magnitude`'s decimal digits, as many as it needs.
    private static func appendDigits<T: UnsignedInteger & FixedWidthInteger>(of magnitude: T, to out: inout [UInt8]) {
        var divisor: T = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        var rest = magnitude
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}

extension RowKeyBits {
    /// The version-5 name-based UUID of a complete hash input (``NameUUID/make(hashInput:)``),
    /// as bits, with no copies.
    init(sha1Of input: [UInt8]) {
        let digest = Insecure.SHA1.hash(data: input)
        var high: UInt64 = 0
        var low: UInt64 = 0
        digest.withUnsafeBytes { raw in
            for i in 0..<8 { high = high << 8 | UInt64(raw[i]) }
            for i in 8..<16 { low = low << 8 | UInt64(raw[i]) }
        }
        // Version 5 and the RFC 4122 variant, as NameUUID sets them.
        high = (high & ~(UInt64(0xF0) << 8)) | (UInt64(0x50) << 8)
        low = (low & ~(UInt64(0xC0) << 56)) | (UInt64(0x80) << 56)
        self.init(high: high, low: low)
    }
}
