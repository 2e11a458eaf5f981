/// Why JSON could not be parsed, with the byte offset.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    public var offset: Int
    public var reason: String
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

/// A strict RFC 8259 parser over UTF-8 bytes, with a depth limit so hostile input cannot
/// exhaust the stack. Its cursor is module-internal so ``EntityJSONReader`` can read
/// entities straight from the bytes.
public struct JSONParser {
    let bytes: [UInt8]
    var i = 0
    var depth = 0
    static let maxDepth = 64

    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: Array(bytes))
        parser.skipSpace()
        let value: JSONValue
        do { value = try parser.value() } catch let error as JSONParseError { throw error } catch {
            throw JSONParseError(offset: parser.i, reason: "\(error)")  // only JSONParseError is thrown while building values
        }
        parser.skipSpace()
        guard parser.i == parser.bytes.count else { throw JSONParseError(offset: parser.i, reason: "unexpected text after the value") }
        return value
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: i, reason: reason) }

    mutating func skipSpace() {
        while i < bytes.count, Self.isSpace(bytes[i]) { i += 1 }
    }

    /// JSON's white space: space, line feed, carriage return, tab.
    public static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private mutating func literal(_ word: String, _ node: JSONValue) throws(JSONParseError) -> JSONValue {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<i + w.count]) == w else { throw fail("expected \(word)") }
        i += w.count
        return node
    }

    mutating func value() throws -> JSONValue {
        guard i < bytes.count else { throw fail("unexpected end") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default: return try number()
        }
    }

    private mutating func object() throws -> JSONValue {
        var members: [(String, JSONValue)] = []
        try objectMembers { parser, name in members.append((name, try parser.value())) }
        return .object(members)
    }

    private mutating func array() throws -> JSONValue {
        var items: [JSONValue] = []
        try arrayItems { parser in items.append(try parser.value()) }
        return .array(items)
    }

    /// Calls `member` at each member's value (the cursor on its first byte); `member` must
    /// consume the value.
    mutating func objectMembers(_ member: (inout JSONParser, String) throws -> Void) throws {
        try objectMembersByBytes { parser, name in try member(&parser, String(decoding: name, as: UTF8.self)) }
    }

    /// ``objectMembers(_:)`` handing each name as its bytes (escapes decoded, when there are
    /// any): for a reader that tells names apart by their bytes and builds a String only for
    /// the ones it keeps.
    mutating func objectMembersByBytes(_ member: (inout JSONParser, ArraySlice<UInt8>) throws -> Void) throws {
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { throw fail("expected an object") }
        depth += 1
        defer { depth -= 1 }
        if depth > JSONParser.maxDepth { throw fail("nested too deeply") }
        i += 1
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            return
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let name = try nameBytes()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            try member(&self, name)
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end in object") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                return
            }
            throw fail("expected ',' or '}'")
        }
    }

    /// The bytes of the string at the cursor, which moves past it: a slice of the document
    /// when it holds no escape, else what ``string()`` decodes.
    private mutating func nameBytes() throws(JSONParseError) -> ArraySlice<UInt8> {
        let start = i + 1
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            i = end + 1
            return bytes[start..<end]
        }
        return Array(try string().utf8)[...]
    }

    /// Calls `item` at each element of an array (the cursor on its first byte).
    mutating func arrayItems(_ item: (inout JSONParser) throws -> Void) throws {
        depth += 1
        defer { depth -= 1 }
        if depth > JSONParser.maxDepth { throw fail("nested too deeply") }
        i += 1
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            return
        }
        while true {
            skipSpace()
            try item(&self)
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end in array") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "]") {
                i += 1
                return
            }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func number() throws(JSONParseError) -> JSONValue {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        var digits = 0
        while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
            i += 1
            digits += 1
        }
        guard digits > 0 else { throw fail("unexpected character") }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            var fraction = 0
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
                i += 1
                fraction += 1
            }
            guard fraction > 0 else { throw fail("expected digits after '.'") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            var exponent = 0
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
                i += 1
                exponent += 1
            }
            guard exponent > 0 else { throw fail("expected exponent digits") }
        }
        return .number(String(decoding: bytes[start..<i], as: UTF8.self))
    }

    /// Checks the value at the cursor and moves past it; a string without escapes (most of
    /// them) is never copied.
    mutating func skipValue() throws {
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
            _ = try value()
            return
        }
        let start = i
        i += 1
        bytes.withUnsafeBufferPointer { buffer in
            while i + 8 <= buffer.count, !ByteScan.mayEndString(ByteScan.word(buffer, at: i)) { i += 8 }
        }
        while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 { i += 1 }
        if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            i += 1
            return
        }
        i = start  // an escape, a control character or the end: read it as `string()` does
        _ = try string()
    }

    mutating func string() throws(JSONParseError) -> String {
        i += 1
        // Fast path: most strings hold no escapes and become a String straight from the bytes.
        let start = i
        bytes.withUnsafeBufferPointer { buffer in
            // Eight bytes at a time while none can end the string (``ByteScan``).
            while i + 8 <= buffer.count, !ByteScan.mayEndString(ByteScan.word(buffer, at: i)) { i += 8 }
        }
        while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 { i += 1 }
        if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            i += 1
            return String(decoding: bytes[start..<i - 1], as: UTF8.self)
        }
        var out: [UInt8] = Array(bytes[start..<i])
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                return String(decoding: out, as: UTF8.self)
            }
            if b < 0x20 { throw fail("control character in string") }
            if b != UInt8(ascii: "\\") {
                out.append(b)
                i += 1
                continue
            }
            i += 1
            guard i < bytes.count else { break }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar), i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") {
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default: throw fail("invalid escape")
            }
        }
        throw fail("unterminated string")
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case 48...57: d = UInt32(c - 48)
            case 65...70: d = UInt32(c - 55)
            case 97...102: d = UInt32(c - 87)
            default: throw fail("bad hex digit")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }
}
