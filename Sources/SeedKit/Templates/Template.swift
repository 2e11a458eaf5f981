import AzureStorage

/// A Mustache template for generated text, rendered as plain text (no HTML escaping) by
/// `MustacheText`, in time linear in its size.
public struct Template: Sendable {
    /// Where the template came from, for errors.
    public var origin: String
    public var source: String
    /// Every name the template reads (`Name`, `speaker.Name`, section names), in order of appearance.
    public var variables: [String]
    let compiled: MustacheText

    /// Parses `source`; `origin` names it in errors (a file path, or `file:line`).
    public init(source: String, origin: String) throws(DatasetError) {
        self.origin = origin
        self.source = source
        self.variables = try Template.scanVariables(source, origin: origin)
        do {
            self.compiled = try MustacheText.parse(source, maxDepth: Self.maxSectionDepth)
        } catch {
            throw DatasetError(file: origin, line: nil, "invalid Mustache template: \(error)")
        }
    }

    /// Renders with a context of names to text (and refs to their entities' fields).
    public func render(_ context: [ExactString: TemplateValue]) -> String {
        compiled.render(context)
    }

    /// How deep sections (`{{#Name}}`, `{{^Name}}`) may nest: parsing and rendering recurse
    /// once per level (1,000 levels once overflowed the stack: a segfault, no message).
    static let maxSectionDepth = 100

    /// Finds the names a template reads, so unknown ones can be rejected before generating,
    /// and refuses sections nested deeper than `maxSectionDepth`. Linear in the template's size.
    static func scanVariables(_ source: String, origin: String) throws(DatasetError) -> [String] {
        // Over bytes with one cursor: Foundation's `range(of:)` on a Substring copies the rest
        // of the text on every call, which made 40,000 tags take 27 s.
        let bytes = Array(source.utf8)
        let open = UInt8(ascii: "{"), close = UInt8(ascii: "}"), newline = UInt8(ascii: "\n")
        var names: [String] = []
        var seen: Set<ExactString> = []
        var depth = 0
        var line = 1
        var i = 0
        while i + 1 < bytes.count {
            if bytes[i] == newline { line += 1 }
            guard bytes[i] == open, bytes[i + 1] == open else { i += 1; continue }
            i += 2
            let triple = i < bytes.count && bytes[i] == open
            let closing = triple ? 3 : 2
            var end = i
            while end + closing <= bytes.count, !(bytes[end..<end + closing].allSatisfy { $0 == close }) { end += 1 }
            guard end + closing <= bytes.count else {
                throw DatasetError(file: origin, line: line, "unclosed Mustache tag")
            }
            var tag = String(decoding: bytes[i..<end], as: UTF8.self).trimmedSpaces()
            line += bytes[i..<end].reduce(0) { $0 + ($1 == newline ? 1 : 0) }
            i = end + closing
            if triple { tag.removeFirst() }
            guard let sigil = tag.first else {
                throw DatasetError(file: origin, line: line, "empty Mustache tag")
            }
            switch sigil {
            case "!": continue
            case ">", "<", "$", "=", "%":
                throw DatasetError(file: origin, line: line, "unsupported Mustache tag '{{\(tag)}}' (partials, blocks, delimiter changes and pragmas are not supported)")
            case "#", "^":
                depth += 1
                if depth > maxSectionDepth {
                    throw DatasetError(file: origin, line: line, "Mustache sections nested more than \(maxSectionDepth) deep; flatten the template")
                }
                tag.removeFirst()
            case "/":
                depth -= 1
                tag.removeFirst()
            case "&", "{":
                tag.removeFirst()
            default: break
            }
            let name = tag.trimmedSpaces()
            if name.isEmpty || name.contains(where: { $0 == " " }) {
                throw DatasetError(file: origin, line: line, "malformed Mustache tag '{{\(tag)}}'")
            }
            if name != "." && seen.insert(ExactString(name)).inserted { names.append(name) }
        }
        return names
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    func trimmedSpaces() -> String {
        let space: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        return String(self.drop(while: space).reversed().drop(while: space).reversed())
    }
}
