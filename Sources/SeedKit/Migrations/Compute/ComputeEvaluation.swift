import AzureStorage
import Foundation

/// A value while an expression is evaluated: integers are 64-bit (an overflow fails the entity,
/// never wraps), text is compared by bytes (as Azure compares strings).
public enum ComputeValue: Sendable, Equatable {
    case int(Int64)
    case double(Double)
    case text(String)
    case bool(Bool)
    case date(EdmDateTime)

    public static func == (a: ComputeValue, b: ComputeValue) -> Bool {
        switch (a, b) {
        case (.int(let x), .int(let y)): x == y
        case (.double(let x), .double(let y)): x == y
        case (.text(let x), .text(let y)): x.utf8.elementsEqual(y.utf8)
        case (.bool(let x), .bool(let y)): x == y
        case (.date(let x), .date(let y)): x == y
        default: false
        }
    }

    /// An entity's value as the language sees it (a Guid is its text); nil for Binary.
    init?(_ value: EdmValue) {
        switch value {
        case .int32(let v): self = .int(Int64(v))
        case .int64(let v): self = .int(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .text(v)
        case .guid: self = .text(value.text)
        case .boolean(let v): self = .bool(v)
        case .dateTime(let v): self = .date(v)
        case .binary: return nil
        }
    }

    var kind: String {
        switch self {
        case .int: "a whole number"
        case .double: "a number"
        case .text: "text"
        case .bool: "true or false"
        case .date: "a date"
        }
    }

    /// The value written as `type`, when that is exact (a whole number as a Double only within
    /// 2^53, a Double as a whole number only when integral, anything as its text).
    func edm(_ type: EdmType) -> EdmValue? {
        switch (self, type) {
        case (.int(let v), .int32): Int32(exactly: v).map(EdmValue.int32)
        case (.int(let v), .int64): .int64(v)
        case (.int(let v), .double): v.magnitude <= 1 << 53 ? .double(Double(v)) : nil
        case (.double(let v), .double): v.isFinite ? .double(v) : nil
        case (.double(let v), .int32): Int32(exactly: v).map(EdmValue.int32)
        case (.double(let v), .int64): Int64(exactly: v).map(EdmValue.int64)
        case (.bool(let v), .boolean): .boolean(v)
        case (.date(let v), .dateTime): v.isInAzureRange ? .dateTime(v) : nil
        case (.text(let v), _): EdmValue.parse(v, as: type)
        case (_, .string): .string(text)
        default: nil
        }
    }

    /// The type a value is written as when `compute` names none: a whole number Int32 when it
    /// fits (else Int64), a number Double, text String, true/false Boolean, a date DateTime.
    var naturalType: EdmType {
        switch self {
        case .int(let v): Int32(exactly: v) != nil ? .int32 : .int64
        case .double: .double
        case .text: .string
        case .bool: .boolean
        case .date: .dateTime
        }
    }

    var text: String {
        switch self {
        case .int(let v): String(v)
        case .double(let v): EdmValue.double(v).text
        case .text(let v): v
        case .bool(let v): v ? "true" : "false"
        case .date(let v): v.iso8601
        }
    }
}

extension ComputeExpression {
    /// The expression's value for `entity`, or why there is none (a property it lacks, an
    /// overflow, a division by zero, a type a function does not take).
    public func evaluate(_ entity: TableEntity) -> Result<ComputeValue, ComputeError> {
        Result { () throws(ComputeError) in try Evaluator(entity: entity).value(root) }
    }
}

struct Evaluator {
    let entity: TableEntity
    /// The longest text a step writes (a Table property holds 32K UTF-16 units).
    static let maxText = 32 * 1024

    func value(_ node: ComputeExpression.Node) throws(ComputeError) -> ComputeValue {
        switch node {
        case .literal(let v): return v
        case .property(let name): return try property(name)
        case .unary("-", let a):
            switch try value(a) {
            case .int(let v):
                guard v != .min else { throw ComputeError("-\(v) overflows a 64-bit whole number") }
                return .int(-v)
            case .double(let v): return .double(-v)
            case let other: throw ComputeError("'-' takes a number, not \(other.kind)")
            }
        case .unary(_, let a): return .bool(!(try bool(a, "not")))
        case .binary("and", let a, let b):
            guard try bool(a, "and") else { return .bool(false) }
            return .bool(try bool(b, "and"))
        case .binary("or", let a, let b):
            if try bool(a, "or") { return .bool(true) }
            return .bool(try bool(b, "or"))
        case .binary(let op, let a, let b): return try binary(op, try value(a), try value(b))
        case .call(let name, let args): return try Functions.call(name, args, self)
        }
    }

    func property(_ name: String) throws(ComputeError) -> ComputeValue {
        if name.utf8.elementsEqual("PartitionKey".utf8) { return .text(entity.partitionKey) }
        if name.utf8.elementsEqual("RowKey".utf8) { return .text(entity.rowKey) }
        guard let raw = entity[name] else {
            throw ComputeError("it reads \(Printable.escaped(name)), which this entity does not have (coalesce(\(name), …) gives a default)")
        }
        guard let v = ComputeValue(raw) else { throw ComputeError("\(Printable.escaped(name)) is Binary, which an expression cannot read") }
        return v
    }

    func bool(_ node: ComputeExpression.Node, _ op: String) throws(ComputeError) -> Bool {
        guard case .bool(let v) = try value(node) else { throw ComputeError("'\(op)' takes true or false") }
        return v
    }

    func binary(_ op: String, _ a: ComputeValue, _ b: ComputeValue) throws(ComputeError) -> ComputeValue {
        switch op {
        case "==": return .bool(try Self.compare(a, b, op) == 0)
        case "!=": return .bool(try Self.compare(a, b, op) != 0)
        case "<": return .bool(try Self.compare(a, b, op) < 0)
        case "<=": return .bool(try Self.compare(a, b, op) <= 0)
        case ">": return .bool(try Self.compare(a, b, op) > 0)
        case ">=": return .bool(try Self.compare(a, b, op) >= 0)
        default: break
        }
        if op == "+", case .text(let x) = a, case .text(let y) = b { return try Self.text(x + y) }
        switch (a, b) {
        case (.int(let x), .int(let y)):
            let result: (partialValue: Int64, overflow: Bool)
            switch op {
            case "+": result = x.addingReportingOverflow(y)
            case "-": result = x.subtractingReportingOverflow(y)
            case "*": result = x.multipliedReportingOverflow(by: y)
            case "/", "%":
                guard y != 0 else { throw ComputeError("\(x) \(op) 0: division by zero") }
                result = op == "/" ? x.dividedReportingOverflow(by: y) : x.remainderReportingOverflow(dividingBy: y)
            default: throw ComputeError("'\(op)' is not an operator")
            }
            guard !result.overflow else { throw ComputeError("\(x) \(op) \(y) overflows a 64-bit whole number") }
            return .int(result.partialValue)
        case (.int, .double), (.double, .int), (.double, .double):
            let (x, y) = (Self.double(a), Self.double(b))
            let v: Double
            switch op {
            case "+": v = x + y
            case "-": v = x - y
            case "*": v = x * y
            case "/":
                guard y != 0 else { throw ComputeError("\(EdmValue.double(x).text) / 0: division by zero") }
                v = x / y
            default: throw ComputeError("'\(op)' takes whole numbers; round() or floor() first")
            }
            guard v.isFinite else { throw ComputeError("\(EdmValue.double(x).text) \(op) \(EdmValue.double(y).text) is not a finite number") }
            return .double(v)
        default:
            throw ComputeError("'\(op)' takes numbers (or text and text for +), not \(a.kind) and \(b.kind)")
        }
    }

    static func double(_ v: ComputeValue) -> Double {
        switch v {
        case .int(let x): Double(x)
        case .double(let x): x
        default: .nan
        }
    }

    /// -1, 0, 1: numbers by value, text by bytes, dates, booleans for (in)equality.
    static func compare(_ a: ComputeValue, _ b: ComputeValue, _ op: String) throws(ComputeError) -> Int {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : x > y ? 1 : 0
        case (.int, .double), (.double, .int), (.double, .double):
            let (x, y) = (double(a), double(b))
            return x < y ? -1 : x > y ? 1 : 0
        case (.text(let x), .text(let y)): return x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : x.utf8.elementsEqual(y.utf8) ? 0 : 1
        case (.date(let x), .date(let y)): return x < y ? -1 : x > y ? 1 : 0
        case (.bool(let x), .bool(let y)) where op == "==" || op == "!=": return x == y ? 0 : 1
        default: throw ComputeError("'\(op)' compares \(a.kind) with \(b.kind)")
        }
    }

    static func text(_ s: String) throws(ComputeError) -> ComputeValue {
        guard s.utf16.count <= maxText else { throw ComputeError("the text made is longer than a Table property's 32K characters") }
        return .text(s)
    }
}
