import Foundation

/// Evaluates WHERE conditions on a record. Values read from CSV are strings; one compared with a
/// number is converted, and a string that is no number is Azure's non-fatal
/// `InvalidTypeConversion` (the record is skipped). Strings compare by their bytes. A missing
/// value (a JSON member that is not there) is NULL: a comparison with it is unknown, and only a
/// condition that holds selects the record.
enum QueryEvaluation {
    /// A record's value could not be used: the record is skipped, the error reported.
    struct Failure: Error {
        var name: String
        var description: String
        /// Ends the query (the work budget is spent), rather than skipping the record.
        var fatal = false
    }

    static let tooMuchWork = Failure(
        name: "QueryTooComplex", description: "The query's LIKE conditions took more than \(QueryRun.maxWork) steps over this blob.", fatal: true)

    static let typeConversion = Failure(name: "InvalidTypeConversion", description: "Invalid type conversion.")

    /// The field a column names in a CSV record; nil when the record has no such column.
    static func field(_ column: QueryColumn, of fields: [[UInt8]], header: [[UInt8]]?) -> [UInt8]? {
        switch column {
        case .ordinal(let n): return n <= fields.count ? fields[n - 1] : nil
        case .name(let name):
            guard let header, let n = header.firstIndex(where: { $0.elementsEqual(name.utf8) }) else { return nil }
            return n < fields.count ? fields[n] : nil
        }
    }

    /// The names an expression gives that a CSV header does not hold (compared by bytes).
    static func unknownNames(_ expression: QueryExpression, header: [[UInt8]]) -> [String] {
        var names: [String] = []
        func add(_ column: QueryColumn) { if case .name(let n) = column { names.append(n) } }
        func add(_ operand: QueryOperand) { if case .column(let c) = operand { add(c) } }
        func walk(_ condition: QueryCondition) {
            switch condition {
            case .compare(let a, _, let b):
                add(a)
                add(b)
            case .isNull(let o, _), .like(let o, _, _), .inList(let o, _, _), .between(let o, _, _, _): add(o)
            case .and(let a, let b), .or(let a, let b):
                walk(a)
                walk(b)
            case .not(let inner): walk(inner)
            }
        }
        if case .columns(let columns) = expression.projection { columns.forEach(add) }
        if let condition = expression.condition { walk(condition) }
        return names.filter { name in !header.contains { $0.elementsEqual(name.utf8) } }
    }

    /// The non-fatal error for a column a CSV record does not have.
    static func missing(_ column: QueryColumn, at position: Int) -> QueryRecordError {
        QueryRecordError(fatal: false, name: "InvalidColumnOrdinal", description: "The record has no column \(column.label).", position: position)
    }

    /// Whether the condition holds (nil: unknown).
    static func holds(_ condition: QueryCondition, in record: QueryRun.Record, header: [[UInt8]]?, work: inout Int) throws(Failure) -> Bool? {
        switch condition {
        case .and(let a, let b):
            let left = try holds(a, in: record, header: header, work: &work)
            if left == false { return false }
            let right = try holds(b, in: record, header: header, work: &work)
            if right == false { return false }
            return left == true && right == true ? true : nil
        case .or(let a, let b):
            let left = try holds(a, in: record, header: header, work: &work)
            if left == true { return true }
            let right = try holds(b, in: record, header: header, work: &work)
            if right == true { return true }
            return left == false && right == false ? false : nil
        case .not(let inner):
            return try holds(inner, in: record, header: header, work: &work).map { !$0 }
        case .isNull(let operand, let negated):
            let isNull = try value(operand, record, header) == .null
            return negated ? !isNull : isNull
        case .compare(let l, let op, let r):
            guard let order = try compare(try value(l, record, header), try value(r, record, header)) else { return nil }
            switch op {
            case .equal: return order == 0
            case .notEqual: return order != 0
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            case .greaterOrEqual: return order >= 0
            }
        case .inList(let operand, let values, let negated):
            let v = try value(operand, record, header)
            var unknown = false
            for candidate in values {
                switch try compare(v, candidate) {
                case 0: return !negated
                case nil: unknown = true
                default: continue
                }
            }
            return unknown ? nil : negated
        case .between(let operand, let low, let high, let negated):
            let v = try value(operand, record, header)
            guard let lower = try compare(v, low), let upper = try compare(v, high) else { return nil }
            let inside = lower >= 0 && upper <= 0
            return negated ? !inside : inside
        case .like(let operand, let pattern, let negated):
            let text: String
            switch try value(operand, record, header) {
            case .null: return nil
            case .string(let s): text = s
            case .number(_, let written): text = written
            case .bool(let b): text = b ? "true" : "false"
            }
            guard let matched = like(Array(text.utf8)[...], Array(pattern.utf8)[...], work: &work) else { throw tooMuchWork }
            return negated ? !matched : matched
        }
    }

    private static func value(_ operand: QueryOperand, _ record: QueryRun.Record, _ header: [[UInt8]]?) throws(Failure) -> QueryValue {
        switch operand {
        case .literal(let v): return v
        case .column(let column):
            switch record {
            case .delimited(let fields):
                guard let field = field(column, of: fields, header: header) else {
                    throw Failure(name: "InvalidColumnOrdinal", description: "The record has no column \(column.label).")
                }
                return .string(String(decoding: field, as: UTF8.self))
            case .json(let json):
                guard case .name(let name) = column, let found = json.member(name) else { return .null }
                switch found {
                case .null: return .null
                case .bool(let b): return .bool(b)
                case .number(let text): return .number(Double(text) ?? 0, text: text)
                case .string(let s): return .string(s)
                case .array, .object:
                    var out = Data()
                    found.write(into: &out)
                    return .string(String(decoding: out, as: UTF8.self))
                }
            }
        }
    }

    /// -1, 0 or 1; nil when either side is NULL. A string meets a number or a boolean by
    /// conversion.
    static func compare(_ a: QueryValue, _ b: QueryValue) throws(Failure) -> Int? {
        switch (a, b) {
        case (.null, _), (_, .null): return nil
        case (.number(let x, _), .number(let y, _)): return x < y ? -1 : x > y ? 1 : 0
        case (.string(let s), .number(let y, _)):
            guard let x = number(s) else { throw typeConversion }
            return x < y ? -1 : x > y ? 1 : 0
        case (.number(let x, _), .string(let s)):
            guard let y = number(s) else { throw typeConversion }
            return x < y ? -1 : x > y ? 1 : 0
        case (.string(let x), .string(let y)):
            return x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : x.utf8.elementsEqual(y.utf8) ? 0 : 1
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (x ? 1 : -1)
        case (.string(let s), .bool(let y)):
            guard let x = boolean(s) else { throw typeConversion }
            return x == y ? 0 : (x ? 1 : -1)
        case (.bool(let x), .string(let s)):
            guard let y = boolean(s) else { throw typeConversion }
            return x == y ? 0 : (x ? 1 : -1)
        default: throw typeConversion
        }
    }

    private static func number(_ s: String) -> Double? {
        let trimmed = s.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, let value = Double(trimmed), value.isFinite else { return nil }
        return value
    }

    private static func boolean(_ s: String) -> Bool? {
        switch s.trimmingCharacters(in: .whitespaces).lowercased() {
        case "true": true
        case "false": false
        default: nil
        }
    }

    /// SQL LIKE on bytes: `%` any run, `_` any one byte. Iterative with one backtrack point, so
    /// a hostile pattern costs at most pattern × text steps, each counted in `work`.
    static func like(_ text: ArraySlice<UInt8>, _ pattern: ArraySlice<UInt8>, work: inout Int) -> Bool? {
        let t = Array(text)
        let p = Array(pattern)
        var (i, j) = (0, 0)
        var star = -1
        var mark = 0
        while i < t.count {
            // Each step is counted against the query's budget: nil when it is spent.
            work -= 1
            if work < 0 { return nil }
            if j < p.count, p[j] == UInt8(ascii: "_") || p[j] == t[i], p[j] != UInt8(ascii: "%") {
                i += 1
                j += 1
            } else if j < p.count, p[j] == UInt8(ascii: "%") {
                star = j
                mark = i
                j += 1
            } else if star >= 0 {
                j = star + 1
                mark += 1
                i = mark
            } else {
                return false
            }
        }
        while j < p.count, p[j] == UInt8(ascii: "%") { j += 1 }
        return j == p.count
    }
}
