import Foundation

/// Parses `$filter` text: `or` binds loosest, then `and`, then `not`; parentheses group.
/// Literals: `'text'` (`''` escapes a quote), `123` (Int32), `123L` (Int64), `1.5`/`1e3`
/// (Double), `true`/`false`, `datetime'…'`, `guid'…'`, `X'…'`/`binary'…'` (hex).
///
/// The parser and the evaluator recurse, so every way of nesting is bounded: `not` and
/// parentheses together at most `maxDepth` deep, `and`/`or` chains at most `maxTerms`
/// terms (Azure itself allows 15 comparisons). 8,000 nested `not`s once overflowed the stack
/// and killed the server; now they are a 400.
public struct FilterParser {
    public static let maxDepth = 32
    public static let maxTerms = 100

    private let chars: [Character]
    private var i = 0
    private var depth = 0
    private var terms = 0

    public static func parse(_ text: String) throws(FilterSyntaxError) -> FilterExpression {
        var parser = FilterParser(chars: Array(text))
        let expression = try parser.orExpression()
        parser.skipSpace()
        guard parser.i == parser.chars.count else { throw parser.fail("unexpected '\(parser.chars[parser.i])'") }
        return expression
    }

    private init(chars: [Character]) { self.chars = chars }

    private func fail(_ reason: String) -> FilterSyntaxError { FilterSyntaxError(offset: i, reason: reason) }

    private mutating func skipSpace() { while i < chars.count, chars[i].isWhitespace { i += 1 } }

    /// Consumes a keyword followed by a non-identifier character.
    private mutating func keyword(_ word: String) -> Bool {
        skipSpace()
        let w = Array(word)
        guard i + w.count <= chars.count, chars[i..<i + w.count].map({ Character($0.lowercased()) }) == w else { return false }
        if i + w.count < chars.count, isIdentifier(chars[i + w.count]) { return false }
        i += w.count
        return true
    }

    private func isIdentifier(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }

    private mutating func orExpression() throws(FilterSyntaxError) -> FilterExpression {
        var left = try andExpression()
        while keyword("or") { left = .or(left, try andExpression()) }
        return left
    }

    private mutating func andExpression() throws(FilterSyntaxError) -> FilterExpression {
        var left = try unary()
        while keyword("and") { left = .and(left, try unary()) }
        return left
    }

    /// Enters one level of `not` or parentheses.
    private mutating func nest() throws(FilterSyntaxError) {
        depth += 1
        if depth > Self.maxDepth { throw fail("'not' and parentheses nested more than \(Self.maxDepth) deep") }
    }

    private mutating func unary() throws(FilterSyntaxError) -> FilterExpression {
        terms += 1
        if terms > Self.maxTerms { throw fail("more than \(Self.maxTerms) terms; Azure allows 15 comparisons in one $filter") }
        if keyword("not") {
            try nest()
            let inner = try unary()
            depth -= 1
            return .not(inner)
        }
        skipSpace()
        if i < chars.count, chars[i] == "(" {
            try nest()
            i += 1
            let inner = try orExpression()
            skipSpace()
            guard i < chars.count, chars[i] == ")" else { throw fail("expected ')'") }
            i += 1
            depth -= 1
            return inner
        }
        let left = try operand()
        for op in [TableFilter.Operator.eq, .ne, .gt, .ge, .lt, .le] where keyword(op.rawValue) {
            return .comparison(left, op, try operand())
        }
        return .operand(left)
    }

    private mutating func operand() throws(FilterSyntaxError) -> FilterExpression.Operand {
        skipSpace()
        guard i < chars.count else { throw fail("expected a property or a value") }
        let c = chars[i]
        if c == "'" { return .literal(.string(try quoted())) }
        if c.isNumber || c == "-" || c == "." { return .literal(try number()) }
        guard isIdentifier(c) else { throw fail("unexpected '\(c)'") }
        let start = i
        while i < chars.count, isIdentifier(chars[i]) { i += 1 }
        let word = String(chars[start..<i])
        if i < chars.count, chars[i] == "'" {
            let text = try quoted()
            switch word.lowercased() {
            case "datetime":
                guard let d = EdmDateTime(iso8601: text) else { throw fail("'\(text)' is not a datetime") }
                return .literal(.dateTime(d))
            case "guid":
                guard let g = UUID(uuidString: text) else { throw fail("'\(text)' is not a guid") }
                return .literal(.guid(g))
            case "x", "binary":
                guard text.count % 2 == 0, let bytes = hexBytes(text) else { throw fail("'\(text)' is not hex") }
                return .literal(.binary(bytes))
            default:
                throw fail("unknown literal prefix '\(word)'")
            }
        }
        switch word {
        case "true": return .literal(.boolean(true))
        case "false": return .literal(.boolean(false))
        default: return .property(word)
        }
    }

    private mutating func quoted() throws(FilterSyntaxError) -> String {
        i += 1
        guard let text = QuotedLiteral.read(chars, at: &i) else { throw fail("unterminated string") }
        return text
    }

    private mutating func number() throws(FilterSyntaxError) -> EdmValue {
        let start = i
        if chars[i] == "-" { i += 1 }
        while i < chars.count,
            chars[i].isNumber || chars[i] == "." || chars[i] == "e" || chars[i] == "E"
                || ((chars[i] == "+" || chars[i] == "-") && (chars[i - 1] == "e" || chars[i - 1] == "E"))
        { i += 1 }
        let text = String(chars[start..<i])
        if i < chars.count, chars[i] == "L" || chars[i] == "l" {
            i += 1
            guard let v = Int64(text) else { throw fail("'\(text)L' is not an Int64") }
            return .int64(v)
        }
        if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            guard let v = Int32(text) else { throw fail("'\(text)' does not fit Int32; write \(text)L for Int64") }
            return .int32(v)
        }
        if i < chars.count, chars[i] == "d" || chars[i] == "D" || chars[i] == "m" || chars[i] == "M" { i += 1 }
        guard let v = Double(text) else { throw fail("'\(text)' is not a number") }
        return .double(v)
    }

    private func hexBytes(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = text.makeIterator()
        while let a = iterator.next(), let b = iterator.next() {
            guard let v = UInt8(String([a, b]), radix: 16) else { return nil }
            bytes.append(v)
        }
        return bytes
    }
}
