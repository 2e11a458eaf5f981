import Foundation

/// A Query Blob Contents expression, parsed: `SELECT * | column[, …] | COUNT(*) FROM BlobStorage
/// [WHERE condition] [LIMIT n]` (docs/PROTOCOL.md §7). What the emulator does not implement of
/// Azure's SQL dialect (other functions, table descriptors, `sys.split`) is refused when parsed,
/// never ignored.
struct QueryExpression: Equatable, Sendable {
    enum Projection: Equatable, Sendable {
        case all
        case columns([QueryColumn])
        case count
    }

    var projection: Projection
    var condition: QueryCondition?
    var limit: Int?

    /// Azure's limit on the columns one SELECT names.
    static let maxColumns = 49
    /// Conditions nest at most this deep (a stranger writes the expression).
    static let maxDepth = 64
    /// A condition holds at most this many comparisons: AND and OR chains build trees as deep
    /// as they are long, and evaluating one recurses per level.
    static let maxComparisons = 64
    /// The longest LIKE pattern: matching costs up to pattern × value steps.
    static let maxPatternBytes = 256
    /// The longest expression taken.
    static let maxLength = 16 * 1024

    /// Why an expression was refused.
    struct Invalid: Error, Equatable {
        var reason: String
    }

    /// Parses `text`; throws ``Invalid`` with the reason.
    init(parsing text: String) throws(Invalid) {
        guard text.utf8.count <= Self.maxLength else { throw Invalid(reason: "it is longer than \(Self.maxLength) bytes") }
        var parser = QueryParser(tokens: try QueryTokenizer.tokens(text))
        self = try parser.query()
    }

    init(projection: Projection, condition: QueryCondition?, limit: Int?) {
        self.projection = projection
        self.condition = condition
        self.limit = limit
    }
}

/// A column named in a query: `_3` (the third, counted from 1) or a name (a CSV header's, a
/// JSON member's; `a.b` reaches into a JSON object).
enum QueryColumn: Equatable, Sendable {
    case ordinal(Int)
    case name(String)

    /// How the column is written in a CSV header or a JSON member of the answer.
    var label: String {
        switch self {
        case .ordinal(let n): "_\(n)"
        case .name(let name): name
        }
    }
}

/// A value in a query: read from a record or written in the expression.
enum QueryValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number and how it was written (a JSON number goes out as it came in).
    case number(Double, text: String)
    case string(String)
}

/// One side of a comparison.
enum QueryOperand: Equatable, Sendable {
    case column(QueryColumn)
    case literal(QueryValue)
}

/// A WHERE condition.
indirect enum QueryCondition: Equatable, Sendable {
    enum Comparison: String, Equatable, Sendable {
        case equal = "="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
    }

    case compare(QueryOperand, Comparison, QueryOperand)
    case isNull(QueryOperand, negated: Bool)
    case like(QueryOperand, pattern: String, negated: Bool)
    case inList(QueryOperand, [QueryValue], negated: Bool)
    case between(QueryOperand, QueryValue, QueryValue, negated: Bool)
    case and(QueryCondition, QueryCondition)
    case or(QueryCondition, QueryCondition)
    case not(QueryCondition)
}

/// The expression's words, numbers, strings and symbols.
enum QueryToken: Equatable {
    case word(String)
    case quotedName(String)
    case string(String)
    case number(String)
    case symbol(String)
}

enum QueryTokenizer {
    static func tokens(_ text: String) throws(QueryExpression.Invalid) -> [QueryToken] {
        let s = Array(text.unicodeScalars)
        var tokens: [QueryToken] = []
        var i = 0
        func isWordStart(_ c: Unicode.Scalar) -> Bool { c == "_" || c.properties.isAlphabetic }
        func isWord(_ c: Unicode.Scalar) -> Bool { isWordStart(c) || ("0"..."9").contains(c) || c == "." }
        while i < s.count {
            let c = s[i]
            if c.properties.isWhitespace {
                i += 1
            } else if isWordStart(c) {
                var word = ""
                while i < s.count, isWord(s[i]) {
                    word.unicodeScalars.append(s[i])
                    i += 1
                }
                tokens.append(.word(word))
            } else if ("0"..."9").contains(c) || (c == "." && i + 1 < s.count && ("0"..."9").contains(s[i + 1])) {
                var number = ""
                while i < s.count,
                    ("0"..."9").contains(s[i]) || s[i] == "." || s[i] == "e" || s[i] == "E"
                        || ((s[i] == "+" || s[i] == "-") && (number.hasSuffix("e") || number.hasSuffix("E")))
                {
                    number.unicodeScalars.append(s[i])
                    i += 1
                }
                guard Double(number) != nil else { throw QueryExpression.Invalid(reason: "'\(number)' is not a number") }
                tokens.append(.number(number))
            } else if c == "'" || c == "\"" {
                // A quote inside is doubled, as SQL writes it.
                var value = ""
                i += 1
                while true {
                    guard i < s.count else {
                        throw QueryExpression.Invalid(reason: "a \(c == "'" ? "string" : "quoted name") is not closed")
                    }
                    if s[i] == c {
                        if i + 1 < s.count, s[i + 1] == c {
                            value.unicodeScalars.append(c)
                            i += 2
                            continue
                        }
                        i += 1
                        break
                    }
                    value.unicodeScalars.append(s[i])
                    i += 1
                }
                tokens.append(c == "'" ? .string(value) : .quotedName(value))
            } else {
                let two = i + 1 < s.count ? String(String.UnicodeScalarView([c, s[i + 1]])) : ""
                if ["<=", ">=", "<>", "!=", "=="].contains(two) {
                    tokens.append(.symbol(two == "<>" ? "!=" : two == "==" ? "=" : two))
                    i += 2
                } else if "*,();=<>-".unicodeScalars.contains(c) {
                    tokens.append(.symbol(String(c)))
                    i += 1
                } else {
                    throw QueryExpression.Invalid(reason: "'\(c)' is not part of the query language")
                }
            }
        }
        return tokens
    }
}

/// A recursive-descent parser over the tokens; depth is bounded.
struct QueryParser {
    let tokens: [QueryToken]
    var index = 0
    var depth = 0
    var comparisons = 0

    init(tokens: [QueryToken]) { self.tokens = tokens }

    private var current: QueryToken? { index < tokens.count ? tokens[index] : nil }

    private func isKeyword(_ word: String) -> Bool {
        if case .word(let w) = current, w.uppercased() == word { return true }
        return false
    }

    private mutating func accept(_ word: String) -> Bool {
        guard isKeyword(word) else { return false }
        index += 1
        return true
    }

    private mutating func acceptSymbol(_ symbol: String) -> Bool {
        guard current == .symbol(symbol) else { return false }
        index += 1
        return true
    }

    private func invalid(_ expected: String) -> QueryExpression.Invalid {
        guard let current else { return QueryExpression.Invalid(reason: "it ends where \(expected) is expected") }
        return QueryExpression.Invalid(reason: "\(Self.describe(current)) is found where \(expected) is expected")
    }

    private static func describe(_ token: QueryToken) -> String {
        switch token {
        case .word(let w): "'\(w)'"
        case .quotedName(let n): "\"\(n)\""
        case .string(let s): "the string '\(s)'"
        case .number(let n): "the number \(n)"
        case .symbol(let s): "'\(s)'"
        }
    }

    private mutating func expect(_ word: String) throws(QueryExpression.Invalid) {
        guard accept(word) else { throw invalid(word) }
    }

    private mutating func expectSymbol(_ symbol: String) throws(QueryExpression.Invalid) {
        guard acceptSymbol(symbol) else { throw invalid("'\(symbol)'") }
    }

    static let reserved: Set<String> = [
        "SELECT", "FROM", "WHERE", "LIMIT", "AND", "OR", "NOT", "IS", "NULL", "LIKE", "IN", "BETWEEN", "TRUE", "FALSE",
    ]

    mutating func query() throws(QueryExpression.Invalid) -> QueryExpression {
        try expect("SELECT")
        let projection = try self.projection()
        try expect("FROM")
        guard case .word(let table) = current else { throw invalid("the table BlobStorage") }
        guard table.uppercased() == "BLOBSTORAGE" else {
            throw QueryExpression.Invalid(reason: "the table is '\(table)'; the emulator queries BlobStorage only (no table descriptors)")
        }
        index += 1
        var condition: QueryCondition?
        if accept("WHERE") { condition = try self.condition() }
        var limit: Int?
        if accept("LIMIT") {
            guard case .number(let text) = current, let n = Int(text), n >= 0 else { throw invalid("a whole number") }
            index += 1
            limit = n
        }
        _ = acceptSymbol(";")
        guard current == nil else { throw invalid("the end of the query") }
        return QueryExpression(projection: projection, condition: condition, limit: limit)
    }

    private mutating func projection() throws(QueryExpression.Invalid) -> QueryExpression.Projection {
        if acceptSymbol("*") { return .all }
        if isKeyword("COUNT") {
            index += 1
            try expectSymbol("(")
            try expectSymbol("*")
            try expectSymbol(")")
            return .count
        }
        var columns: [QueryColumn] = []
        repeat {
            columns.append(try column())
            guard columns.count <= QueryExpression.maxColumns else {
                throw QueryExpression.Invalid(reason: "it names more than \(QueryExpression.maxColumns) columns; use SELECT *")
            }
        } while acceptSymbol(",")
        return .columns(columns)
    }

    private mutating func column() throws(QueryExpression.Invalid) -> QueryColumn {
        switch current {
        case .quotedName(let name):
            index += 1
            return .name(name)
        case .word(let word) where !Self.reserved.contains(word.uppercased()):
            index += 1
            if acceptSymbol("(") {
                throw QueryExpression.Invalid(reason: "the function \(word) is not implemented by the emulator (COUNT(*) is)")
            }
            if word.hasPrefix("_"), let n = Int(word.dropFirst()), n >= 1 { return .ordinal(n) }
            return .name(word)
        default: throw invalid("a column")
        }
    }

    private mutating func nested<T>(_ body: (inout QueryParser) throws(QueryExpression.Invalid) -> T) throws(QueryExpression.Invalid) -> T {
        depth += 1
        defer { depth -= 1 }
        guard depth <= QueryExpression.maxDepth else {
            throw QueryExpression.Invalid(reason: "its conditions nest deeper than \(QueryExpression.maxDepth)")
        }
        return try body(&self)
    }

    mutating func condition() throws(QueryExpression.Invalid) -> QueryCondition {
        try nested { (p: inout QueryParser) throws(QueryExpression.Invalid) in
            var left = try p.conjunction()
            while p.accept("OR") { left = .or(left, try p.conjunction()) }
            return left
        }
    }

    private mutating func conjunction() throws(QueryExpression.Invalid) -> QueryCondition {
        var left = try negation()
        while accept("AND") { left = .and(left, try negation()) }
        return left
    }

    private mutating func negation() throws(QueryExpression.Invalid) -> QueryCondition {
        if accept("NOT") { return try nested { (p: inout QueryParser) throws(QueryExpression.Invalid) in .not(try p.negation()) } }
        if acceptSymbol("(") {
            let inner = try condition()
            try expectSymbol(")")
            return inner
        }
        return try predicate()
    }

    private mutating func predicate() throws(QueryExpression.Invalid) -> QueryCondition {
        comparisons += 1
        guard comparisons <= QueryExpression.maxComparisons else {
            throw QueryExpression.Invalid(reason: "it holds more than \(QueryExpression.maxComparisons) comparisons")
        }
        let left = try operand()
        if accept("IS") {
            let negated = accept("NOT")
            try expect("NULL")
            return .isNull(left, negated: negated)
        }
        let negated = accept("NOT")
        if accept("LIKE") {
            guard case .string(let pattern) = current else { throw invalid("a pattern string") }
            guard pattern.utf8.count <= QueryExpression.maxPatternBytes else {
                throw QueryExpression.Invalid(reason: "a LIKE pattern is longer than \(QueryExpression.maxPatternBytes) bytes")
            }
            index += 1
            return .like(left, pattern: pattern, negated: negated)
        }
        if accept("IN") {
            try expectSymbol("(")
            var values: [QueryValue] = []
            repeat {
                values.append(try literal())
                guard values.count <= 1024 else { throw QueryExpression.Invalid(reason: "an IN list holds more than 1024 values") }
            } while acceptSymbol(",")
            try expectSymbol(")")
            return .inList(left, values, negated: negated)
        }
        if accept("BETWEEN") {
            let low = try literal()
            try expect("AND")
            let high = try literal()
            return .between(left, low, high, negated: negated)
        }
        if negated { throw invalid("LIKE, IN or BETWEEN") }
        guard case .symbol(let s) = current, let comparison = QueryCondition.Comparison(rawValue: s) else {
            throw invalid("a comparison (=, !=, <>, <, <=, >, >=, IS, LIKE, IN, BETWEEN)")
        }
        index += 1
        return .compare(left, comparison, try operand())
    }

    private mutating func operand() throws(QueryExpression.Invalid) -> QueryOperand {
        switch current {
        case .quotedName, .word:
            if case .word(let w) = current, ["TRUE", "FALSE", "NULL"].contains(w.uppercased()) { return .literal(try literal()) }
            return .column(try column())
        default: return .literal(try literal())
        }
    }

    private mutating func literal() throws(QueryExpression.Invalid) -> QueryValue {
        let negative = acceptSymbol("-")
        switch current {
        case .number(let text):
            index += 1
            let written = negative ? "-" + text : text
            return .number(Double(written) ?? 0, text: written)
        case .string(let s) where !negative:
            index += 1
            return .string(s)
        case .word(let w) where !negative && ["TRUE", "FALSE"].contains(w.uppercased()):
            index += 1
            return .bool(w.uppercased() == "TRUE")
        case .word(let w) where !negative && w.uppercased() == "NULL":
            index += 1
            return .null
        default: throw invalid("a value")
        }
    }
}
