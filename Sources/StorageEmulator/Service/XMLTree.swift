import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A small XML element tree (names, text, children; no attributes), enough for the service
/// properties document: read with XMLParser, written back canonically.
struct XMLTree: Sendable, Equatable {
    var name: String
    var text: String
    var children: [XMLTree]

    init(name: String, text: String = "", children: [XMLTree] = []) {
        self.name = name
        self.text = text
        self.children = children
    }

    /// The first child named `name`.
    subscript(_ name: String) -> XMLTree? { children.first { $0.name == name } }

    /// Parses a document; nil when it is not well-formed XML or declares a document type
    /// (``XMLBody``). Nesting is bounded by the
    /// parser (libxml2 refuses documents deeper than 256 levels).
    static func parse(_ data: Data, keepingWhitespace: Bool = false) -> XMLTree? {
        let builder = Builder()
        builder.keepWhitespace = keepingWhitespace
        guard let parser = XMLBody.parser(data) else { return nil }
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else { return nil }
        return root
    }

    /// `<?xml …?>` and the element, children in order.
    var document: String { "<?xml version=\"1.0\" encoding=\"utf-8\"?>" + serialized }

    var serialized: String {
        if children.isEmpty {
            return text.isEmpty ? "<\(name) />" : "<\(name)>\(XMLEscape.text(text))</\(name)>"
        }
        return "<\(name)>" + children.map(\.serialized).joined() + "</\(name)>"
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [XMLTree] = []
        var root: XMLTree?
        /// Text is kept as sent (a separator may be a newline), not trimmed.
        var keepWhitespace = false

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]
        ) {
            stack.append(XMLTree(name: name))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            var done = stack.removeLast()
            if !done.children.isEmpty { done.text = "" }
            if !keepWhitespace { done.text = done.text.trimmingCharacters(in: .whitespacesAndNewlines) }
            if stack.isEmpty { root = done } else { stack[stack.count - 1].children.append(done) }
        }
    }
}
