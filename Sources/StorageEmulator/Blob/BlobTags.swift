import Foundation
import StorageProtocol

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Blob index tags: at most 10 key/value pairs, keys 1–128 and values 0–256 characters of
/// letters, digits, space and `+ - . / : = _`, keys case-sensitive (docs/PROTOCOL.md §7).
struct BlobTags: Sendable, Equatable {
    var pairs: [(String, String)]

    static func == (a: BlobTags, b: BlobTags) -> Bool {
        a.pairs.count == b.pairs.count && zip(a.pairs, b.pairs).allSatisfy { $0.0.isExactly($1.0) && $0.1.isExactly($1.1) }
    }

    static let none = BlobTags(encoded: "[]")

    static let invalid = ServiceError(400, .invalidTag, "The tags specified are invalid. It contains characters that are not permitted.")

    /// The value of `key`, keys compared by bytes.
    subscript(key: String) -> String? { pairs.first { $0.0.isExactly(key) }?.1 }

    static func allowed(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { s in
            s.properties.isAlphabetic || ("0"..."9").contains(s) || " +-./:=_".unicodeScalars.contains(s)
        }
    }

    init(_ pairs: [(String, String)]) throws {
        guard pairs.count <= 10 else {
            throw ServiceError(400, .invalidTag, "The tags specified are invalid: a blob has at most 10 tags.")
        }
        for (i, (key, value)) in pairs.enumerated() {
            guard (1...128).contains(key.count), value.count <= 256, Self.allowed(key), Self.allowed(value) else { throw Self.invalid }
            guard !pairs[..<i].contains(where: { $0.0.isExactly(key) }) else {
                throw ServiceError(400, .invalidTag, "The tags specified are invalid: the key '\(key)' appears twice.")
            }
        }
        self.pairs = pairs
    }

    /// Tags already checked (a subset of a blob's).
    static func unchecked(_ pairs: [(String, String)]) -> BlobTags {
        var tags = BlobTags.none
        tags.pairs = pairs
        return tags
    }

    /// `x-ms-tags: k1=v1&k2=v2` (URL-encoded); nil when the header is absent.
    static func header(_ request: TransportRequest) throws -> BlobTags? {
        guard let text = request.headers["x-ms-tags"] else { return nil }
        var pairs: [(String, String)] = []
        for part in text.split(separator: "&", omittingEmptySubsequences: true) {
            let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String? { String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard kv.count == 2, let key = decode(kv[0]), let value = decode(kv[1]) else { throw invalid }
            pairs.append((key, value))
        }
        return try BlobTags(pairs)
    }

    /// The body of Set Blob Tags: `<Tags><TagSet><Tag><Key/><Value/></Tag>…</TagSet></Tags>`,
    /// read through ``XMLBody`` (no document types) with keys and values exactly as sent.
    init(xml body: Data) throws {
        let reader = TagSetReader()
        guard let parser = XMLBody.parser(body) else { throw XMLBody.invalid }
        parser.delegate = reader
        guard parser.parse(), reader.root == "Tags", reader.error == nil else {
            throw ServiceError(400, .invalidXmlDocument, "XML specified is not syntactically valid: \(reader.error ?? "not a Tags document").")
        }
        try self.init(reader.pairs)
    }

    /// `<Tags><TagSet>…</TagSet></Tags>`, as Get Blob Tags and List Blobs write them.
    var xml: String {
        "<Tags><TagSet>"
            + pairs.map { "<Tag>" + XMLEscape.element("Key", $0.0) + "<Value>\(XMLEscape.text($0.1))</Value></Tag>" }.joined()
            + "</TagSet></Tags>"
    }

    /// Stored as the metadata is.
    var encoded: String { MetadataCoding.encode(pairs) }

    init(encoded: String) { pairs = MetadataCoding.decode(encoded) }
}

/// A tag condition (`x-ms-if-tags`) or a Find Blobs by Tags expression (`where`):
/// `"key" = 'value'` comparisons (`=`, `<>`, `>`, `>=`, `<`, `<=`, values compared by their
/// UTF-8 bytes) joined by `AND` — and, in a condition, `OR` and parentheses. In `where`,
/// `@container = 'name'` limits the search to one container.
indirect enum TagExpression: Sendable {
    case compare(key: String, op: String, value: String)
    case and(TagExpression, TagExpression)
    case or(TagExpression, TagExpression)

    /// Whether `tags` (and the blob's `container`) satisfy it; a missing key satisfies nothing.
    func matches(_ tags: BlobTags, container: String) -> Bool {
        switch self {
        case .and(let a, let b): return a.matches(tags, container: container) && b.matches(tags, container: container)
        case .or(let a, let b): return a.matches(tags, container: container) || b.matches(tags, container: container)
        case .compare(let key, let op, let value):
            guard let actual = key == "@container" ? container : tags[key] else { return false }
            let a = Array(actual.utf8)
            let b = Array(value.utf8)
            switch op {
            case "=": return a == b
            case "<>": return a != b
            case ">": return a.lexicographicallyPrecedes(b) == false && a != b
            case ">=": return !a.lexicographicallyPrecedes(b)
            case "<": return a.lexicographicallyPrecedes(b)
            default: return a.lexicographicallyPrecedes(b) || a == b  // "<="
            }
        }
    }

    /// The keys it compares (Find Blobs by Tags returns those of each blob).
    var keys: [String] {
        switch self {
        case .compare(let key, _, _): return key == "@container" ? [] : [key]
        case .and(let a, let b), .or(let a, let b): return a.keys + b.keys
        }
    }

    /// Parses `text`; `condition` allows `OR`, `<>` and parentheses (x-ms-if-tags), else only
    /// `AND` and `@container` (Find Blobs by Tags). At most 10 comparisons, as on Azure.
    static func parse(_ text: String, condition: Bool) throws -> TagExpression {
        var parser = TagParser(text: Array(text.unicodeScalars), condition: condition)
        let expression = try parser.or()
        parser.skipSpace()
        guard parser.index == parser.text.count, parser.comparisons <= 10 else { throw parser.error }
        return expression
    }
}

/// A recursive-descent parser over the expression's scalars, depth bounded by its length.
private struct TagParser {
    let text: [Unicode.Scalar]
    let condition: Bool
    var index = 0
    var comparisons = 0
    var depth = 0

    init(text: [Unicode.Scalar], condition: Bool) {
        self.text = text
        self.condition = condition
    }

    var error: ServiceError {
        condition
            ? ServiceError(400, .invalidHeaderValue, "The value for one of the HTTP headers is not in the correct format: x-ms-if-tags.")
            : ServiceError(400, .invalidQueryParameterValue, "Error parsing query at or near character position \(index): the where expression.")
    }

    mutating func skipSpace() { while index < text.count, text[index] == " " { index += 1 } }

    mutating func keyword(_ word: String) -> Bool {
        skipSpace()
        let scalars = Array(word.unicodeScalars)
        guard index + scalars.count <= text.count else { return false }
        let slice = String(String.UnicodeScalarView(text[index..<index + scalars.count]))
        guard slice.lowercased() == word.lowercased() else { return false }
        let after = index + scalars.count
        guard after == text.count || text[after] == " " || text[after] == "(" || text[after] == "\"" || text[after] == "'" else { return false }
        index = after
        return true
    }

    mutating func or() throws -> TagExpression {
        var left = try and()
        while condition, keyword("or") { left = .or(left, try and()) }
        return left
    }

    mutating func and() throws -> TagExpression {
        var left = try term()
        while keyword("and") { left = .and(left, try term()) }
        return left
    }

    mutating func term() throws -> TagExpression {
        skipSpace()
        if condition, index < text.count, text[index] == "(" {
            depth += 1
            guard depth <= 10 else { throw error }
            index += 1
            let inner = try or()
            skipSpace()
            guard index < text.count, text[index] == ")" else { throw error }
            index += 1
            depth -= 1
            return inner
        }
        let key = try name()
        skipSpace()
        let operators = condition ? ["<>", ">=", "<=", "=", ">", "<"] : [">=", "<=", "=", ">", "<"]
        guard
            let op = operators.first(where: { op in
                let s = Array(op.unicodeScalars)
                return index + s.count <= text.count && Array(text[index..<index + s.count]) == s
            })
        else { throw error }
        index += op.unicodeScalars.count
        if key == "@container" && op != "=" { throw error }
        let value = try quoted("'")
        comparisons += 1
        return .compare(key: key, op: op, value: value)
    }

    /// A key: `"quoted"`, `@container`, or a bare run of letters, digits and `_`.
    mutating func name() throws -> String {
        skipSpace()
        guard index < text.count else { throw error }
        if text[index] == "\"" { return try quoted("\"") }
        let start = index
        if text[index] == "@" { index += 1 }
        while index < text.count, text[index].properties.isAlphabetic || ("0"..."9").contains(text[index]) || text[index] == "_" { index += 1 }
        let key = String(String.UnicodeScalarView(text[start..<index]))
        guard !key.isEmpty, key != "@" else { throw error }
        if key.hasPrefix("@") && (condition || key != "@container") { throw error }
        return key
    }

    mutating func quoted(_ mark: Unicode.Scalar) throws -> String {
        skipSpace()
        guard index < text.count, text[index] == mark else { throw error }
        index += 1
        let start = index
        while index < text.count, text[index] != mark { index += 1 }
        guard index < text.count else { throw error }
        let value = String(String.UnicodeScalarView(text[start..<index]))
        index += 1
        return value
    }
}

/// Collects `Tags/TagSet/Tag/{Key,Value}` from a parse; anything else in a Tag is an error.
private final class TagSetReader: NSObject, XMLParserDelegate {
    var root: String?
    var path: [String] = []
    var pairs: [(String, String)] = []
    var key: String?
    var value: String?
    var text = ""
    var error: String?

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:])
    {
        if root == nil { root = name }
        path.append(name)
        text = ""
        if path == ["Tags", "TagSet", "Tag"] { (key, value) = (nil, nil) }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        switch path {
        case ["Tags", "TagSet", "Tag", "Key"]: key = text
        case ["Tags", "TagSet", "Tag", "Value"]: value = text
        case ["Tags", "TagSet", "Tag"]:
            if let key { pairs.append((key, value ?? "")) } else { error = "a Tag without a Key" }
        default: break
        }
        path.removeLast()
        text = ""
    }
}
