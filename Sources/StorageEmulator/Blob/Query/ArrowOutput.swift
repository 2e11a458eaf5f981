import Foundation

/// A query's answer as an Arrow stream: the schema and an empty batch first, then a batch per
/// stretch of output — the layout of Azure's recorded answer (docs/PROTOCOL.md §7, "Arrow
/// output"). Values are converted from the text a record holds to the schema's types; a value
/// that does not convert skips its record with `InvalidTypeConversion`, as a comparison does.
struct ArrowOutput: Sendable {
    let writer: ArrowStreamWriter
    private var columns: [[ArrowValue]]
    private(set) var rows = 0
    /// The cells' bytes so far, near enough to cut batches at about the query's output chunk.
    private(set) var pendingBytes = 0

    init(fields: [ArrowField]) {
        writer = ArrowStreamWriter(fields: fields)
        columns = Array(repeating: [], count: fields.count)
    }

    /// The stream's start: the schema, and the empty batch Azure sends after it.
    func start() -> Data {
        var out = writer.schema()
        out.append(writer.batch(rows: 0, columns: Array(repeating: [], count: writer.fields.count)))
        return out
    }

    /// Why a record was not added.
    enum Refusal: Error {
        /// The record has a different number of columns than the schema has fields.
        case columns(record: Int, schema: Int)
        /// A value is not of its field's type.
        case conversion
    }

    /// Adds a record given as its values' text (`nil`: null).
    mutating func add(_ values: [[UInt8]?]) throws(Refusal) {
        guard values.count == writer.fields.count else { throw .columns(record: values.count, schema: writer.fields.count) }
        var cells: [ArrowValue] = []
        for (value, field) in zip(values, writer.fields) {
            guard let value else {
                cells.append(.null)
                continue
            }
            guard let cell = Self.convert(value, to: field.type) else { throw .conversion }
            cells.append(cell)
            pendingBytes += value.count + 8
        }
        for (i, cell) in cells.enumerated() { columns[i].append(cell) }
        rows += 1
    }

    /// The rows added since the last batch, as one batch (nothing when there are none).
    mutating func flush() -> Data {
        guard rows > 0 else { return Data() }
        let batch = writer.batch(rows: rows, columns: columns)
        columns = Array(repeating: [], count: columns.count)
        rows = 0
        pendingBytes = 0
        return batch
    }

    /// A value's text as a cell of `type`; empty text is null. `nil`: it does not convert.
    static func convert(_ text: [UInt8], to type: ArrowType) -> ArrowValue? {
        if text.isEmpty { return .null }
        let string = String(decoding: text, as: UTF8.self)
        switch type {
        case .utf8:
            // Arrow strings are UTF-8; bytes that are not stay out.
            return String(validating: text, as: UTF8.self) == nil ? nil : .utf8(text)
        case .int64:
            return Int64(string).map { .integer($0) }
        case .double:
            guard let value = Double(string), string.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
            return .double(value)
        case .bool:
            switch string.lowercased() {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: return nil
            }
        case .timestampMilliseconds:
            return ISOTimestamp.milliseconds(text).map { .integer($0) }
        case .decimal128(let precision, let scale):
            return decimal(text, precision: Int(precision), scale: Int(scale)).map { .decimal($0) }
        case .stringMap:
            return nil
        }
    }

    /// A decimal's unscaled value: its digits as written, the point dropped — what Azure's
    /// recorded answer holds ("400" in a decimal(4, 2) is 400). At most `precision` digits, at
    /// most `scale` of them after the point.
    static func decimal(_ text: [UInt8], precision: Int, scale: Int) -> Int128? {
        var digits = text[...]
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        var value: Int128 = 0
        var count = 0
        var fraction: Int?
        for byte in digits {
            if byte == UInt8(ascii: "."), fraction == nil {
                fraction = 0
                continue
            }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            count += 1
            if let f = fraction { fraction = f + 1 }
            guard count <= precision, (fraction ?? 0) <= scale else { return nil }
            value = value * 10 + Int128(byte - UInt8(ascii: "0"))
        }
        guard count > 0 else { return nil }
        return negative ? -value : value
    }
}

/// An ISO 8601 date or date-time (`2020-01-02`, `2020-01-02T03:04:05.678Z`, `…+01:00`; no zone
/// is UTC) as milliseconds since 1970.
enum ISOTimestamp {
    static func milliseconds(_ text: [UInt8]) -> Int64? {
        var i = 0
        func number(_ width: Int) -> Int? {
            guard i + width <= text.count else { return nil }
            var value = 0
            for byte in text[i..<(i + width)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            i += width
            return value
        }
        func expect(_ c: Character) -> Bool {
            guard i < text.count, text[i] == c.asciiValue else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var millisecond = 0
        var offsetMinutes = 0
        if i < text.count {
            guard expect("T") || expect(" "), let h = number(2), expect(":"), let m = number(2), h < 24, m < 60 else { return nil }
            (hour, minute) = (h, m)
            if expect(":") {
                guard let s = number(2), s < 60 else { return nil }
                second = s
                if expect(".") {
                    var digits = 0
                    while i < text.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[i]) {
                        if digits < 3 { millisecond = millisecond * 10 + Int(text[i] - UInt8(ascii: "0")) }
                        digits += 1
                        i += 1
                    }
                    guard digits > 0, digits <= 9 else { return nil }
                    if digits < 3 { for _ in digits..<3 { millisecond *= 10 } }
                }
            }
            if expect("Z") {
            } else if i < text.count, text[i] == UInt8(ascii: "+") || text[i] == UInt8(ascii: "-") {
                let sign = text[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let oh = number(2), expect(":"), let om = number(2), oh < 24, om < 60 else { return nil }
                offsetMinutes = sign * (oh * 60 + om)
            }
            guard i == text.count else { return nil }
        }
        // Days since 1970 (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = ((days * 24 + hour) * 60 + minute - offsetMinutes) * 60 + second
        return Int64(seconds) * 1000 + Int64(millisecond)
    }
}
