/// A JSON document with ordered object members: what ``JSONParser`` reads and what manifests
/// and plans are written from, deterministically.
///
/// Numbers keep their text, so a parsed Int64 or a double's digits are never rounded through
/// `Double`; ``int(_:)`` and ``uint(_:)`` make them for writing. Strings and member names
/// compare by their bytes, as Azure compares them. Written with our own writer: JSONEncoder's
/// spacing and number formatting are not a contract.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func int(_ value: Int64) -> JSONValue { .number(String(value)) }
    public static func uint(_ value: UInt64) -> JSONValue { .number(String(value)) }

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.string(let x), .string(let y)): x.isExactly(y)
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0.isExactly($1.0) && $0.1 == $1.1 }
        default: false
        }
    }

    /// An object's members in order; none for any other value.
    public var members: [(String, JSONValue)] {
        if case .object(let members) = self { return members }
        return []
    }

    /// The member named `key` of an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0.isExactly(key) }?.1
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// Two-space indented text with a trailing newline.
    public func pretty() -> String {
        var out: [UInt8] = []
        write(to: &out, indent: 0, pretty: true)
        out.append(UInt8(ascii: "\n"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the value as ``pretty()`` writes it at nesting depth `indent` (no trailing
    /// newline): for documents written a piece at a time.
    public func append(to out: inout [UInt8], indent: Int) {
        write(to: &out, indent: indent, pretty: true)
    }

    /// Compact single-line text.
    public func compact() -> String {
        var out: [UInt8] = []
        write(to: &out, indent: 0, pretty: false)
        return String(decoding: out, as: UTF8.self)
    }

    private func write(to out: inout [UInt8], indent: Int, pretty: Bool) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let s): JSONText.appendString(s, to: &out)
        case .array(let items):
            if items.isEmpty {
                out.append(contentsOf: "[]".utf8)
                return
            }
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent + 1, pretty)
                item.write(to: &out, indent: indent + 1, pretty: pretty)
            }
            newline(&out, indent, pretty)
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty {
                out.append(contentsOf: "{}".utf8)
                return
            }
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent + 1, pretty)
                JSONText.appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                value.write(to: &out, indent: indent + 1, pretty: pretty)
            }
            newline(&out, indent, pretty)
            out.append(UInt8(ascii: "}"))
        }
    }

    private func newline(_ out: inout [UInt8], _ indent: Int, _ pretty: Bool) {
        guard pretty else { return }
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }
}
