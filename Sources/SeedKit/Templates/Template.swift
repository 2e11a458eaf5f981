import Mustache

/// A Mustache template for generated text, rendered as plain text (no HTML escaping).
public struct Template: Sendable {
    /// Where the template came from, for errors.
    public var origin: String
    public var source: String
    /// Every name the template reads (`Name`, `speaker.Name`, section names), in order of appearance.
    public var variables: [String]
    let compiled: MustacheTemplate

    /// Parses `source`; `origin` names it in errors (a file path, or `file:line`).
    public init(source: String, origin: String) throws(DatasetError) {
        self.origin = origin
        self.source = source
        self.variables = try Template.scanVariables(source, origin: origin)
        do {
            // The pragma switches escaping off: generated text is data, not HTML.
            self.compiled = try MustacheTemplate(string: "{{% CONTENT_TYPE: TEXT}}" + source)
        } catch {
            throw DatasetError(file: origin, line: nil, "invalid Mustache template: \(error)")
        }
    }

    /// Renders with a context of names to text (and refs to nested contexts).
    public func render(_ context: [String: Any]) -> String {
        compiled.render(context)
    }

    /// Finds the names a template reads, so unknown ones can be rejected before generating.
    static func scanVariables(_ source: String, origin: String) throws(DatasetError) -> [String] {
        var names: [String] = []
        var rest = Substring(source)
        var line = 1
        while let open = rest.range(of: "{{") {
            line += rest[..<open.lowerBound].reduce(0) { $0 + ($1 == "\n" ? 1 : 0) }
            rest = rest[open.upperBound...]
            let triple = rest.first == "{"
            guard let close = rest.range(of: triple ? "}}}" : "}}") else {
                throw DatasetError(file: origin, line: line, "unclosed Mustache tag")
            }
            var tag = String(rest[..<close.lowerBound]).trimmedSpaces()
            rest = rest[close.upperBound...]
            if triple { tag.removeFirst() }
            guard let sigil = tag.first else {
                throw DatasetError(file: origin, line: line, "empty Mustache tag")
            }
            switch sigil {
            case "!", "%": continue
            case ">", "<", "$", "=":
                throw DatasetError(file: origin, line: line, "unsupported Mustache tag '{{\(tag)}}' (partials, blocks and delimiter changes are not supported)")
            case "#", "^", "/", "&", "{":
                tag.removeFirst()
            default: break
            }
            let name = tag.trimmedSpaces()
            if name.isEmpty || name.contains(where: { $0 == " " }) {
                throw DatasetError(file: origin, line: line, "malformed Mustache tag '{{\(tag)}}'")
            }
            if name != "." && !names.contains(name) { names.append(name) }
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
