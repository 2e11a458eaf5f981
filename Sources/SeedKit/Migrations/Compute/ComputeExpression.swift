import AzureStorage

/// `compute`'s expression: a small typed language over one entity's properties, read when
/// the migration file is read (a mistake is one line naming the file and line) and evaluated
/// per entity (``evaluate(_:)``) as a pure function of it.
///
/// ```text
/// Capacity * 2 + 10                       arithmetic: + - * / % on numbers, + on text
/// upper(trim(City)) + ', ' + Country      text functions
/// addDays(StartsAt, 7)                    date arithmetic
/// if(Capacity >= 100, 'large', 'small')   comparisons, and, or, not
/// coalesce(Nickname, Name)                a property an entity may lack
/// ```
///
/// Literals: numbers (`12`, `2.5`), text in single quotes (`'it''s'`), `true`, `false`,
/// `datetime'2026-11-29T00:00:00Z'`. Names are properties (and `PartitionKey`, `RowKey`).
public struct ComputeExpression: Sendable {
    indirect enum Node: Sendable {
        case literal(ComputeValue)
        case property(String)
        case unary(String, Node)
        case binary(String, Node, Node)
        case call(String, [Node])
    }

    /// The expression as the file wrote it.
    public let source: String
    let root: Node
    /// The properties it reads.
    public let reads: [String]

    /// The longest expression, and how deep it may nest.
    public static let maxLength = 4096
    static let maxDepth = 32

    /// Reads `source`; the error says what is wrong and where (a character offset).
    public static func parse(_ source: String) throws(ComputeError) -> ComputeExpression {
        guard source.utf8.count <= maxLength else { throw ComputeError("the expression is longer than \(maxLength) bytes") }
        var parser = Parser(tokens: try Lexer.tokens(source))
        let root = try parser.expression(depth: 0)
        if let extra = parser.peek { throw ComputeError("unexpected '\(extra.text)' at character \(extra.offset + 1)") }
        var reads: [String] = []
        func collect(_ node: Node) {
            switch node {
            case .literal: break
            case .property(let name): if !reads.contains(where: { $0.utf8.elementsEqual(name.utf8) }) { reads.append(name) }
            case .unary(_, let a): collect(a)
            case .binary(_, let a, let b):
                collect(a)
                collect(b)
            case .call(_, let args): args.forEach(collect)
            }
        }
        collect(root)
        try Functions.check(root)
        return ComputeExpression(source: source, root: root, reads: reads)
    }
}

/// What is wrong with an expression, or with evaluating it on one entity.
public struct ComputeError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

struct Token: Sendable {
    enum Kind: Sendable { case number, text, name, symbol, datetime }
    let kind: Kind
    let text: String
    let offset: Int
}

enum Lexer {
    static let symbols = ["==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ","]

    static func tokens(_ source: String) throws(ComputeError) -> [Token] {
        let bytes = Array(source.utf8)
        var tokens: [Token] = []
        var i = 0
        func isNameByte(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || (b >= 0x30 && b <= 0x39) }
        /// Text in single quotes from `i` (at the opening quote), `''` for one quote.
        func quoted(from start: Int) throws(ComputeError) -> String {
            i += 1
            guard let text = QuotedLiteral.read(bytes, at: &i, end: bytes.count) else {
                throw ComputeError("text starting at character \(start + 1) has no closing quote")
            }
            return text
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D {
                i += 1
                continue
            }
            let start = i
            if b == 0x27 {
                tokens.append(Token(kind: .text, text: try quoted(from: start), offset: start))
            } else if b >= 0x30 && b <= 0x39 {
                while i < bytes.count, (bytes[i] >= 0x30 && bytes[i] <= 0x39) || bytes[i] == 0x2E || bytes[i] == 0x65 || bytes[i] == 0x45 {
                    i += 1
                }
                tokens.append(Token(kind: .number, text: String(decoding: bytes[start..<i], as: UTF8.self), offset: start))
            } else if isNameByte(b) {
                while i < bytes.count, isNameByte(bytes[i]) { i += 1 }
                let name = String(decoding: bytes[start..<i], as: UTF8.self)
                if name == "datetime", i < bytes.count, bytes[i] == 0x27 {
                    tokens.append(Token(kind: .datetime, text: try quoted(from: i), offset: start))
                } else {
                    tokens.append(Token(kind: .name, text: name, offset: start))
                }
            } else if let symbol = symbols.first(where: { bytes[i...].starts(with: Array($0.utf8)) }) {
                i += symbol.utf8.count
                tokens.append(Token(kind: .symbol, text: symbol, offset: start))
            } else {
                throw ComputeError("unexpected '\(Printable.escaped(String(decoding: [b], as: UTF8.self), quotes: false))' at character \(start + 1)")
            }
            guard tokens.count <= 2048 else { throw ComputeError("the expression holds more than 2048 tokens") }
        }
        return tokens
    }
}

/// Precedence, lowest first: or; and; not; comparisons; + -; * / %; unary -.
struct Parser {
    let tokens: [Token]
    var at = 0

    var peek: Token? { at < tokens.count ? tokens[at] : nil }

    mutating func take(_ symbol: String) -> Bool {
        guard let next = peek, next.kind == .symbol || next.kind == .name, next.text == symbol else { return false }
        at += 1
        return true
    }

    mutating func expression(depth: Int) throws(ComputeError) -> ComputeExpression.Node {
        guard depth < ComputeExpression.maxDepth else { throw ComputeError("the expression nests deeper than \(ComputeExpression.maxDepth)") }
        var left = try and(depth)
        while take("or") { left = .binary("or", left, try and(depth)) }
        return left
    }

    mutating func and(_ depth: Int) throws(ComputeError) -> ComputeExpression.Node {
        var left = try not(depth)
        while take("and") { left = .binary("and", left, try not(depth)) }
        return left
    }

    mutating func not(_ depth: Int) throws(ComputeError) -> ComputeExpression.Node {
        if take("not") { return .unary("not", try not(depth + 1)) }
        return try comparison(depth)
    }

    mutating func comparison(_ depth: Int) throws(ComputeError) -> ComputeExpression.Node {
        let left = try sum(depth)
        for op in ["==", "!=", "<=", ">=", "<", ">"] where take(op) { return .binary(op, left, try sum(depth)) }
        return left
    }

    mutating func sum(_ depth: Int) throws(ComputeError) -> ComputeExpression.Node {
        var left = try product(depth)
        while true {
            if take("+") {
                left = .binary("+", left, try product(depth))
            } else if take("-") {
                left = .binary("-", left, try product(depth))
            } else {
                return left
            }
        }
    }

    mutating func product(_ depth: Int) throws(ComputeError) -> ComputeExpression.Node {
        var left = try unary(depth)
        let operators: [String] = ["*", "/", "%"]
        while let next = peek, next.kind == .symbol, operators.contains(next.text) {
            at += 1
            left = .binary(next.text, left, try unary(depth))
        }
        return left
    }

    mutating func unary(_ depth: Int) throws(ComputeError) -> ComputeExpression.Node {
        guard depth < ComputeExpression.maxDepth else { throw ComputeError("the expression nests deeper than \(ComputeExpression.maxDepth)") }
        if take("-") { return .unary("-", try unary(depth + 1)) }
        return try primary(depth)
    }

    mutating func primary(_ depth: Int) throws(ComputeError) -> ComputeExpression.Node {
        guard let token = peek else { throw ComputeError("the expression ends where a value is expected") }
        at += 1
        switch token.kind {
        case .number:
            if let int = Int64(token.text) { return .literal(.int(int)) }
            if let double = Double(token.text), double.isFinite { return .literal(.double(double)) }
            throw ComputeError("'\(token.text)' at character \(token.offset + 1) is not a number")
        case .text: return .literal(.text(token.text))
        case .datetime:
            guard case .dateTime(let date)? = EdmValue.parse(token.text, as: .dateTime) else {
                throw ComputeError("datetime'\(Printable.escaped(token.text, quotes: false))' is not a date and time (2026-11-29T10:00:00Z)")
            }
            return .literal(.date(date))
        case .symbol:
            guard token.text == "(" else { throw ComputeError("unexpected '\(token.text)' at character \(token.offset + 1)") }
            let inner = try expression(depth: depth + 1)
            guard take(")") else { throw ComputeError("a '(' at character \(token.offset + 1) is not closed") }
            return inner
        case .name:
            switch token.text {
            case "true": return .literal(.bool(true))
            case "false": return .literal(.bool(false))
            case "and", "or", "not": throw ComputeError("'\(token.text)' at character \(token.offset + 1) needs a value before it")
            default: break
            }
            guard take("(") else { return .property(token.text) }
            var args: [ComputeExpression.Node] = []
            if !take(")") {
                repeat { args.append(try expression(depth: depth + 1)) } while take(",")
                guard take(")") else { throw ComputeError("\(token.text)( at character \(token.offset + 1) is not closed") }
            }
            return .call(token.text, args)
        }
    }
}
