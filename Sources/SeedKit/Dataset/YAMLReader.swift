import AzureStorage
import Yams

/// Reads a composed YAML tree with every error located at `file:line`.
struct YAMLReader {
    let file: String

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
            pairs.append((Self.text(key), value, keyNode))
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
        return Self.text(s)
    }

    /// The scalar's text. `!bom "…"` is text that begins with U+FEFF: the YAML library drops one
    /// leading byte-order mark of a scalar however it is written, so `scan` tags such text and
    /// that mark is put back here (docs/FORMATS.md).
    static func text(_ s: Node.Scalar) -> String {
        s.tag.rawValue == "!bom" ? "\u{FEFF}" + s.string : s.string
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
