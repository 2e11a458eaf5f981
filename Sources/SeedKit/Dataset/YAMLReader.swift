import AzureStorage
import Yams

/// Reads a composed YAML tree with every error located at `file:line`.
struct YAMLReader {
    let file: String
    /// Where the double-quoted scalars that begin with a byte-order mark start, as the YAML
    /// library counts lines and columns (``bomScalars(in:)``).
    var bomStarts: Set<Int> = []

    init(file: String, source: String? = nil) {
        self.file = file
        bomStarts = source.map(Self.bomScalars) ?? []
    }

    func error(_ node: Node?, _ message: Phrase) -> DatasetError {
        DatasetError(file: file, line: YAMLReader.line(of: node), message)
    }

    /// The YAML tree of a file's text: an empty file or malformed YAML is a located error.
    func compose(_ text: String) throws(DatasetError) -> Node {
        do {
            guard let node = try Yams.compose(yaml: text) else { throw DatasetError(file: file, line: nil, "the file is empty") }
            return node
        } catch let error as DatasetError {
            throw error
        } catch let error as YamlError {
            throw DatasetError(file: file, line: error.line, "malformed YAML: \(error.problem)")
        } catch {
            throw DatasetError(file: file, line: nil, "malformed YAML")
        }
    }

    static func line(of node: Node?) -> Int? {
        guard let node else { return nil }
        switch node {
        case .scalar(let s): return s.mark?.line
        case .mapping(let m): return m.mark?.line
        case .sequence(let s): return s.mark?.line
        case .alias(let a): return a.mark?.line
        }
    }

    /// The mapping's pairs, after checking that every key is one of `allowed`.
    func mapping(_ node: Node, _ what: String, allowed: [String]) throws(DatasetError) -> [(key: String, value: Node, keyNode: Node)] {
        guard case .mapping(let mapping) = node else { throw error(node, "\(what) must be a mapping") }
        var pairs: [(key: String, value: Node, keyNode: Node)] = []
        for (keyNode, value) in mapping {
            guard case .scalar(let key) = keyNode else { throw error(keyNode, "\(what): keys must be plain names") }
            if !allowed.isEmpty && !allowed.contains(key.string) {
                throw error(keyNode, "unknown key '\(key.string)' in \(what) (expected one of: \(allowed.joined(separator: ", ")))")
            }
            pairs.append((text(key), value, keyNode))
        }
        return pairs
    }

    /// A mapping whose keys are free-form names (rows, fields, types).
    func namedMapping(_ node: Node, _ what: String) throws(DatasetError) -> [(key: String, value: Node, keyNode: Node)] {
        try mapping(node, what, allowed: [])
    }

    func required(_ pairs: [(key: String, value: Node, keyNode: Node)], _ key: String, in what: String, at node: Node) throws(DatasetError) -> Node {
        guard let value = pairs.first(where: { $0.key == key })?.value else {
            throw error(node, "\(what) is missing '\(key)'")
        }
        return value
    }

    func sequence(_ node: Node, _ what: String) throws(DatasetError) -> [Node] {
        guard case .sequence(let seq) = node else { throw error(node, "\(what) must be a list") }
        return Array(seq)
    }

    func string(_ node: Node, _ what: String) throws(DatasetError) -> String {
        guard case .scalar(let s) = node else { throw error(node, "\(what) must be a single value") }
        if s.style == .plain && (s.string == "~" || s.string == "null" || s.string.isEmpty) {
            throw error(node, "\(what) must not be empty")
        }
        return text(s)
    }

    /// The scalar's text, with the byte-order mark the YAML library dropped put back: `"\uFEFF…"`
    /// as YAML writes it portably (what `scan` writes), or `!bom "…"` (what it wrote before).
    func text(_ s: Node.Scalar) -> String {
        if s.tag.rawValue != "!bom", s.style == .doubleQuoted, let mark = s.mark, bomStarts.contains(Self.position(mark.line, mark.column)) {
            return "\u{FEFF}" + s.string
        }
        return Self.text(s)
    }

    static func position(_ line: Int, _ column: Int) -> Int { line << 24 | column }

    /// The positions (1-based line and column, in Unicode scalars, lines broken where libyaml
    /// breaks them: LF, CR, CR LF, NEL, U+2028, U+2029) of every `"` followed by a byte-order
    /// mark, raw or escaped (`\uFEFF`, `\U0000FEFF`, any case). The library's scalars carry the
    /// position of their opening quote: a scalar starting at one began with the mark. (The mark
    /// is dropped by the library's conversion of the scalar's bytes to a String.)
    static func bomScalars(in text: String) -> Set<Int> {
        let scalars = Array(text.unicodeScalars)
        var found: Set<Int> = []
        var line = 1
        var column = 1
        var i = 0
        func escapedBOM(at j: Int) -> Bool {
            guard j + 1 < scalars.count, scalars[j] == "\\" else { return false }
            let digits: String
            switch scalars[j + 1] {
            case "u": digits = String(String.UnicodeScalarView(scalars[min(j + 2, scalars.count)..<min(j + 6, scalars.count)]))
            case "U": digits = String(String.UnicodeScalarView(scalars[min(j + 2, scalars.count)..<min(j + 10, scalars.count)]))
            default: return false
            }
            return UInt32(digits, radix: 16) == 0xFEFF && (digits.count == 4 || digits.count == 8)
        }
        while i < scalars.count {
            let c = scalars[i]
            if c == "\"", i + 1 < scalars.count, scalars[i + 1] == "\u{FEFF}" || escapedBOM(at: i + 1) {
                found.insert(position(line, column))
            }
            switch c {
            case "\n", "\u{85}", "\u{2028}", "\u{2029}":
                line += 1
                column = 1
            case "\r":
                if i + 1 < scalars.count, scalars[i + 1] == "\n" { i += 1 }
                line += 1
                column = 1
            default:
                column += 1
            }
            i += 1
        }
        return found
    }

    /// The scalar's text. `!bom "…"` is text that begins with U+FEFF: the YAML library drops one
    /// leading byte-order mark of a scalar however it is written, so `scan` tags such text and
    /// that mark is put back here (docs/FORMATS.md).
    static func text(_ s: Node.Scalar) -> String {
        s.tag.rawValue == "!bom" ? "\u{FEFF}" + s.string : s.string
    }

    /// A scalar's text as it is, empty text included (a metadata value may be empty).
    func plainText(_ node: Node, _ what: String) throws(DatasetError) -> String {
        guard case .scalar(let s) = node else { throw error(node, "\(what) must be a single value") }
        return text(s)
    }

    func int(_ node: Node, _ what: String) throws(DatasetError) -> Int64 {
        guard let v = Int64(try string(node, what)) else { throw error(node, "\(what) must be a whole number") }
        return v
    }

    func double(_ node: Node, _ what: String) throws(DatasetError) -> Double {
        guard let v = Double(try string(node, what)), v.isFinite else { throw error(node, "\(what) must be a number") }
        return v
    }

    func strings(_ node: Node, _ what: String) throws(DatasetError) -> [String] {
        var out: [String] = []
        for item in try sequence(node, what) { out.append(try string(item, "an item of \(what)")) }
        return out
    }

    /// A scalar as a typed value: with an explicit type, the text must parse as that type;
    /// otherwise a plain `true`/`false` is a Boolean, a plain whole number an Int32 (Int64
    /// when larger), a plain decimal a Double, anything else (and anything quoted) a String.
    func value(_ node: Node, _ what: String, type: EdmType?) throws(DatasetError) -> EdmValue {
        let text = try string(node, what)
        if let type {
            guard let value = EdmValue.parse(text, as: type) else {
                throw error(node, "\(what): '\(text)' is not a valid \(type.rawValue)")
            }
            return value
        }
        guard case .scalar(let s) = node, s.style == .plain else { return .string(text) }
        if text == "true" { return .boolean(true) }
        if text == "false" { return .boolean(false) }
        if let i = Int32(text) { return .int32(i) }
        if let i = Int64(text) { return .int64(i) }
        if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let d = Double(text), d.isFinite { return .double(d) }
        return .string(text)
    }

    func edmType(_ node: Node, _ what: String) throws(DatasetError) -> EdmType {
        let text = try string(node, what)
        guard let type = EdmType(rawValue: text) else {
            throw error(node, "\(what): unknown type '\(text)' (expected one of: \(EdmType.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return type
    }
}
