import Foundation

/// A JSON value as a query reads it: members keep their order, numbers keep how they were
/// written, so a record selected whole goes out as it came in (less its spacing).
indirect enum QueryJSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([QueryJSON])
    case object([(String, QueryJSON)])

    static func == (a: QueryJSON, b: QueryJSON) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x), .number(let y)): x.utf8.elementsEqual(y.utf8)
        case (.string(let x), .string(let y)): x.utf8.elementsEqual(y.utf8)
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)):
            x.count == y.count && zip(x, y).allSatisfy { $0.0.utf8.elementsEqual($1.0.utf8) && $0.1 == $1.1 }
        default: false
        }
    }

    /// The member `name` of an object; `a.b` reaches into nested objects.
    func member(_ name: String) -> QueryJSON? {
        guard case .object(let members) = self else { return nil }
        if let found = members.first(where: { $0.0.utf8.elementsEqual(name.utf8) }) { return found.1 }
        guard let dot = name.firstIndex(of: ".") else { return nil }
        let head = String(name[..<dot])
        return member(head)?.member(String(name[name.index(after: dot)...]))
    }

    /// Compact JSON.
    func write(into out: inout Data) {
        switch self {
        case .null: out.append(contentsOf: Array("null".utf8))
        case .bool(let b): out.append(contentsOf: Array((b ? "true" : "false").utf8))
        case .number(let text): out.append(contentsOf: Array(text.utf8))
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (n, item) in items.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (n, (name, value)) in members.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(name, into: &out)
                out.append(UInt8(ascii: ":"))
                value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ s: String, into out: inout Data) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: Array("\\\"".utf8))
            case UInt8(ascii: "\\"): out.append(contentsOf: Array("\\\\".utf8))
            case 0x0A: out.append(contentsOf: Array("\\n".utf8))
            case 0x0D: out.append(contentsOf: Array("\\r".utf8))
            case 0x09: out.append(contentsOf: Array("\\t".utf8))
            case 0..<0x20: out.append(contentsOf: Array(String(format: "\\u%04x", Int(byte)).utf8))
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// Reads JSON records one after another (`JsonTextConfiguration`): each record is a JSON value,
/// usually an object; spacing and the record separator may stand between them.
struct JSONRecordReader: Sendable {
    var recordSeparator: [UInt8] = Array("\n".utf8)
    /// Values nest at most this deep (a stranger writes the blob).
    static let maxDepth = 64

    enum Scan: Equatable {
        case record(QueryJSON, next: Int)
        case incomplete
        /// Nothing but spacing and separators is left.
        case done
        /// Not JSON: the description says what and where (a blob offset relative to `base`).
        case invalid(String, at: Int)
    }

    /// Reads the record at or after `start`; `atEnd`: nothing follows `bytes`.
    func scan(_ bytes: [UInt8], from start: Int, atEnd: Bool, base: Int) -> Scan {
        var i = start
        while i < bytes.count {
            if [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) {
                i += 1
            } else if !recordSeparator.isEmpty, i + recordSeparator.count <= bytes.count,
                bytes[i..<(i + recordSeparator.count)].elementsEqual(recordSeparator)
            {
                i += recordSeparator.count
            } else {
                break
            }
        }
        guard i < bytes.count else { return atEnd ? .done : .incomplete }
        var parser = Parser(bytes: bytes, index: i, base: base)
        do throws(Failure) {
            // A record is usually an object or an array; Azure also takes a bare value (and
            // names only those two when a record cannot start).
            guard "{[\"-0123456789tfn".utf8.contains(bytes[i]) else { throw parser.unexpected(expecting: "'{', or '['") }
            let value = try parser.value(depth: 0)
            return .record(value, next: parser.index)
        } catch {
            switch error {
            case .incomplete:
                return atEnd ? .invalid("Unexpected end of input at [byte: \(base + bytes.count)].", at: base + bytes.count) : .incomplete
            case .invalid(let description, let at):
                return .invalid(description, at: at)
            }
        }
    }

    enum Failure: Error {
        case incomplete
        case invalid(String, at: Int)
    }

    struct Parser {
        let bytes: [UInt8]
        var index: Int
        let base: Int

        func unexpected(expecting: String) -> Failure {
            guard index < bytes.count else { return .incomplete }
            let token = String(decoding: [bytes[index]], as: UTF8.self)
            return .invalid("Unexpected token '\(token)' at [byte: \(base + index)]. Expecting tokens \(expecting).", at: base + index)
        }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) throws(Failure) -> QueryJSON {
            skipSpace()
            guard index < bytes.count else { throw .incomplete }
            guard depth < JSONRecordReader.maxDepth else {
                throw .invalid("A value at [byte: \(base + index)] nests deeper than \(JSONRecordReader.maxDepth) levels.", at: base + index)
            }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [(String, QueryJSON)] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
                while true {
                    skipSpace()
                    guard index < bytes.count else { throw .incomplete }
                    guard bytes[index] == UInt8(ascii: "\"") else { throw unexpected(expecting: "'\"', or '}'") }
                    let name = try string()
                    skipSpace()
                    guard index < bytes.count else { throw .incomplete }
                    guard bytes[index] == UInt8(ascii: ":") else { throw unexpected(expecting: "':'") }
                    index += 1
                    members.append((name, try value(depth: depth + 1)))
                    skipSpace()
                    guard index < bytes.count else { throw .incomplete }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                    } else if bytes[index] == UInt8(ascii: "}") {
                        index += 1
                        return .object(members)
                    } else {
                        throw unexpected(expecting: "',', or '}'")
                    }
                }
            case UInt8(ascii: "["):
                index += 1
                var items: [QueryJSON] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                }
                while true {
                    items.append(try value(depth: depth + 1))
                    skipSpace()
                    guard index < bytes.count else { throw .incomplete }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                    } else if bytes[index] == UInt8(ascii: "]") {
                        index += 1
                        return .array(items)
                    } else {
                        throw unexpected(expecting: "',', or ']'")
                    }
                }
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try word("true", .bool(true))
            case UInt8(ascii: "f"): return try word("false", .bool(false))
            case UInt8(ascii: "n"): return try word("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw unexpected(expecting: "a value")
            }
        }

        private mutating func word(_ text: String, _ value: QueryJSON) throws(Failure) -> QueryJSON {
            for expected in text.utf8 {
                guard index < bytes.count else { throw .incomplete }
                guard bytes[index] == expected else { throw unexpected(expecting: "'\(text)'") }
                index += 1
            }
            return value
        }

        private mutating func number() throws(Failure) -> QueryJSON {
            let start = index
            while index < bytes.count, "+-.eE0123456789".utf8.contains(bytes[index]) { index += 1 }
            // A number running to the end of what has arrived may go on in the next piece.
            guard index < bytes.count else { throw .incomplete }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard Double(text) != nil, !text.hasPrefix("+") else {
                index = start
                throw unexpected(expecting: "a number")
            }
            return .number(text)
        }

        private mutating func string() throws(Failure) -> String {
            index += 1
            var out: [UInt8] = []
            while true {
                guard index < bytes.count else { throw .incomplete }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return String(decoding: out, as: UTF8.self)
                }
                if byte < 0x20 { throw unexpected(expecting: "a character (control characters are escaped in strings)") }
                guard byte == UInt8(ascii: "\\") else {
                    out.append(byte)
                    index += 1
                    continue
                }
                guard index + 1 < bytes.count else { throw .incomplete }
                index += 1
                switch bytes[index] {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard index + 4 < bytes.count else { throw .incomplete }
                    guard let unit = UInt16(String(decoding: bytes[(index + 1)...(index + 4)], as: UTF8.self), radix: 16) else {
                        throw unexpected(expecting: "four hexadecimal digits")
                    }
                    index += 4
                    var scalar = Unicode.Scalar(unit)
                    // A surrogate pair: the second half follows as another \u escape.
                    if (0xD800..<0xDC00).contains(unit) {
                        guard index + 6 < bytes.count else { throw .incomplete }
                        if bytes[index + 1] == UInt8(ascii: "\\"), bytes[index + 2] == UInt8(ascii: "u"),
                            let low = UInt16(String(decoding: bytes[(index + 3)...(index + 6)], as: UTF8.self), radix: 16),
                            (0xDC00..<0xE000).contains(low)
                        {
                            scalar = Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))
                            index += 6
                        }
                    }
                    out.append(contentsOf: Array(String(scalar ?? "\u{FFFD}").utf8))
                default: throw unexpected(expecting: "an escape (\\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t, \\u)")
                }
                index += 1
            }
        }
    }
}
