import AzureStorage

/// What a template name resolves to: a field's text, or a referenced entity's fields.
public enum TemplateValue: Sendable, Equatable {
    case text(String)
    case object([ExactString: String])
}

/// The Mustache subset azseed's templates use — variables (`{{Name}}`, `{{speaker.Name}}`,
/// `{{.}}`, `{{{Name}}}`, `{{&Name}}`), sections and inverted sections, and comments —
/// parsed and rendered in time linear in the template's size.
///
/// It replaces the swift-mustache library, whose parser measured the rest of the text at every
/// tag (40,000 tags took 27 s) and recursed without bound (1,000 nested sections overflowed
/// the stack). Output is the library's, byte for byte, for everything azseed accepts: the
/// same standalone-line rules (a section, inverted-section or comment tag alone on its line
/// takes the line with it), as if the template were preceded by the text pragma azseed used
/// to send it, and no HTML escaping. Two deliberate differences: an object rendered as a
/// variable is empty (the library printed a dictionary in hash order, which is not
/// deterministic), and names are matched by their bytes and may hold any character but
/// blanks and braces (the library refused non-ASCII names).
struct MustacheText: Sendable {
    indirect enum Node: Sendable {
        case text(String)
        case variable(String)
        case section(String, [Node], inverted: Bool)
    }

    let nodes: [Node]

    struct SyntaxError: Error, CustomStringConvertible {
        var description: String
        /// The template line (1-based) where the problem is.
        var line: Int
    }

    /// Every name the template reads (variables, dotted names, sections), in order of
    /// appearance, each once (by bytes); `.` is not a name.
    var variables: [String] {
        var names: [String] = []
        var seen: Set<ExactString> = []
        func walk(_ nodes: [Node]) {
            for node in nodes {
                switch node {
                case .text: break
                case .variable(let name):
                    if name != ".", seen.insert(ExactString(name)).inserted { names.append(name) }
                case .section(let name, let inner, _):
                    if name != ".", seen.insert(ExactString(name)).inserted { names.append(name) }
                    walk(inner)
                }
            }
        }
        walk(nodes)
        return names
    }

    // MARK: Parsing

    /// Parses `source`; sections nest at most `maxDepth` deep.
    static func parse(_ source: String, maxDepth: Int) throws(SyntaxError) -> MustacheText {
        var parser = Parser(bytes: Array(source.utf8), maxDepth: maxDepth)
        // The library read templates after a `{{% CONTENT_TYPE: TEXT}}` pragma: that tag took a
        // first line holding only blanks with it, and left the first tag not at a line start.
        let newLine = parser.lineFinished()
        return MustacheText(nodes: try parser.parse(section: nil, newLine: newLine, depth: 0))
    }

    private struct Parser {
        let bytes: [UInt8]
        let maxDepth: Int
        var i = 0

        init(bytes: [UInt8], maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        static let open = UInt8(ascii: "{"), close = UInt8(ascii: "}"), newline = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")

        var atEnd: Bool { i >= bytes.count }

        /// The length of a line break at `at` (`\n` or `\r\n`), else 0.
        func lineBreak(at: Int) -> Int {
            guard at < bytes.count else { return 0 }
            if bytes[at] == Self.newline { return 1 }
            if bytes[at] == Self.cr, at + 1 < bytes.count, bytes[at + 1] == Self.newline { return 2 }
            return 0
        }

        func isBlank(_ b: UInt8) -> Bool { b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }

        /// At the end, or only blanks then a line break (consumed): the tag just read stands alone.
        mutating func lineFinished() -> Bool {
            if atEnd { return true }
            var j = i
            while j < bytes.count, isBlank(bytes[j]) { j += 1 }
            let n = lineBreak(at: j)
            guard n > 0 else { return false }
            i = j + n
            return true
        }

        func text(_ from: Int, _ to: Int) -> String { String(decoding: bytes[from..<to], as: UTF8.self) }

        /// An error at the cursor, with its line (counted only when there is an error).
        func fail(_ reason: String) -> SyntaxError {
            SyntaxError(description: reason, line: 1 + bytes[..<min(i, bytes.count)].reduce(0) { $0 + ($1 == Self.newline ? 1 : 0) })
        }

        /// Reads `[blanks] name [blanks] }}` and returns the name.
        mutating func name() throws(SyntaxError) -> String {
            while !atEnd, bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "\t") || lineBreak(at: i) > 0 || bytes[i] == Self.cr { i += 1 }
            let start = i
            while !atEnd, bytes[i] != Self.close, !isBlank(bytes[i]), bytes[i] != Self.newline, bytes[i] != Self.cr { i += 1 }
            let found = text(start, i)
            while !atEnd, isBlank(bytes[i]) || bytes[i] == Self.newline || bytes[i] == Self.cr { i += 1 }
            guard !found.isEmpty else { throw fail("empty Mustache tag") }
            guard i + 1 < bytes.count, bytes[i] == Self.close, bytes[i + 1] == Self.close else {
                throw fail("malformed or unclosed Mustache tag '{{\(found)'")
            }
            i += 2
            return found
        }

        /// One level: text and tags up to the `{{/section}}` that closes it (or the end).
        mutating func parse(section: String?, newLine startsLine: Bool, depth: Int) throws(SyntaxError) -> [Node] {
            var nodes: [Node] = []
            var newLine = startsLine
            var blanksBefore = ""
            while !atEnd {
                if newLine {
                    let start = i
                    while !atEnd, isBlank(bytes[i]) { i += 1 }
                    blanksBefore = text(start, i)
                }
                // Text up to a tag (its "{{" consumed), a line break (not consumed) or the end.
                let start = i
                var tagFound = false
                while !atEnd {
                    if lineBreak(at: i) > 0 { break }
                    if bytes[i] == Self.open, i + 1 < bytes.count, bytes[i + 1] == Self.open {
                        tagFound = true
                        break
                    }
                    i += 1
                }
                let run = text(start, i)
                if !tagFound, lineBreak(at: i) > 0 {
                    let n = lineBreak(at: i)
                    nodes.append(.text(blanksBefore + run + text(i, i + n)))
                    i += n
                    newLine = true
                    continue
                }
                if !run.isEmpty {
                    nodes.append(.text(blanksBefore + run))
                    blanksBefore = ""
                    newLine = false
                }
                if !tagFound { break }
                i += 2
                func flushBlanks() {
                    if !blanksBefore.isEmpty {
                        nodes.append(.text(blanksBefore))
                        blanksBefore = ""
                    }
                }
                var standalone = false
                switch atEnd ? 0 : bytes[i] {
                case UInt8(ascii: "#"), UInt8(ascii: "^"):
                    let inverted = bytes[i] == UInt8(ascii: "^")
                    i += 1
                    let sectionName = try name()
                    if newLine && lineFinished() { standalone = true } else { flushBlanks() }
                    guard depth < maxDepth else { throw fail("Mustache sections nested more than \(maxDepth) deep; flatten the template") }
                    let inner = try parse(section: sectionName, newLine: newLine && standalone, depth: depth + 1)
                    nodes.append(.section(sectionName, inner, inverted: inverted))
                case UInt8(ascii: "/"):
                    i += 1
                    let closing = try name()
                    guard let section, closing.isExactly(section) else {
                        throw fail("'{{/\(closing)}}' closes no open section")
                    }
                    if !(newLine && lineFinished()) { flushBlanks() }
                    return nodes
                case UInt8(ascii: ">"), UInt8(ascii: "<"), UInt8(ascii: "$"), UInt8(ascii: "="), UInt8(ascii: "%"):
                    throw fail(
                        "unsupported Mustache tag '{{\(text(i, min(i + 20, bytes.count)))…' (partials, blocks, delimiter changes and pragmas are not supported)"
                    )
                case UInt8(ascii: "!"):
                    // A comment: skipped, up to and including "}}".
                    while !atEnd, !(bytes[i] == Self.close && i + 1 < bytes.count && bytes[i + 1] == Self.close) { i += 1 }
                    guard !atEnd else { throw fail("a comment is not closed with '}}'") }
                    i += 2
                    standalone = newLine && lineFinished()
                case UInt8(ascii: "{"):
                    flushBlanks()
                    i += 1
                    let variable = try name()
                    guard !atEnd, bytes[i] == Self.close else { throw fail("'{{{\(variable)' is not closed with '}}}'") }
                    i += 1
                    nodes.append(.variable(variable))
                case UInt8(ascii: "&"):
                    flushBlanks()
                    i += 1
                    nodes.append(.variable(try name()))
                default:
                    flushBlanks()
                    nodes.append(.variable(try name()))
                }
                newLine = standalone
            }
            if let section { throw fail("section '\(section)' is not closed") }
            return nodes
        }
    }

    // MARK: Rendering

    /// Renders with `context`: names resolve from the innermost section outwards.
    func render(_ context: [ExactString: TemplateValue]) -> String {
        var out = ""
        var stack: [Frame] = [.root(context)]
        Self.render(nodes, &stack, into: &out)
        return out
    }

    private enum Frame {
        case root([ExactString: TemplateValue])
        case value(TemplateValue)

        func child(_ name: Substring) -> TemplateValue? {
            switch self {
            case .root(let fields): fields[ExactString(String(name))]
            case .value(.object(let fields)): fields[ExactString(String(name))].map(TemplateValue.text)
            case .value(.text): nil
            }
        }
    }

    private static func render(_ nodes: [Node], _ stack: inout [Frame], into out: inout String) {
        for node in nodes {
            switch node {
            case .text(let text):
                out += text
            case .variable(let name):
                switch lookup(name, stack) {
                case .value(.text(let text))?: out += text
                default: break
                }
            case .section(let name, let inner, let inverted):
                let found = lookup(name, stack)
                if inverted {
                    if found == nil { render(inner, &stack, into: &out) }
                } else if let found {
                    stack.append(found)
                    render(inner, &stack, into: &out)
                    stack.removeLast()
                }
            }
        }
    }

    /// `.` is the innermost value; `a.b` finds `a` in the innermost frame that has it, then `b`
    /// in it; `.a` looks in the innermost frame only.
    private static func lookup(_ name: String, _ stack: [Frame]) -> Frame? {
        if name == "." { return stack.last }
        let parts = name.split(separator: ".")
        guard let first = parts.first else { return nil }
        var found: TemplateValue?
        if name.hasPrefix(".") {
            found = stack.last?.child(first)
        } else {
            for frame in stack.reversed() {
                if let value = frame.child(first) {
                    found = value
                    break
                }
            }
        }
        for part in parts.dropFirst() {
            guard let current = found else { return nil }
            found = Frame.value(current).child(part)
        }
        return found.map(Frame.value)
    }
}
