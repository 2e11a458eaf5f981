import Foundation

/// OData `$filter` expressions built from values, so every literal is escaped and typed
/// correctly (`'O''Brien'`, `123L`, `datetime'…'`, `guid'…'`, `X'…'`).
public indirect enum TableFilter: Sendable, Equatable, CustomStringConvertible {
    case compare(String, Operator, EdmValue)
    case and(TableFilter, TableFilter)
    case or(TableFilter, TableFilter)
    case not(TableFilter)
    /// A filter as a person wrote it (a migration's `where:`), already checked by its reader;
    /// sent as it is, within parentheses when combined.
    case written(String, comparisons: Int)

    public enum Operator: String, Sendable { case eq, ne, gt, ge, lt, le }

    public static func equal(_ property: String, _ value: EdmValue) -> TableFilter { .compare(property, .eq, value) }
    public static func partition(_ key: String) -> TableFilter { .equal("PartitionKey", .string(key)) }

    /// The `$filter` text.
    public var description: String {
        switch self {
        case .compare(let property, let op, let value): "\(property) \(op.rawValue) \(TableFilter.literal(value))"
        case .and(let a, let b): "(\(a)) and (\(b))"
        case .or(let a, let b): "(\(a)) or (\(b))"
        case .not(let a): "not (\(a))"
        case .written(let text, _): text
        }
    }

    /// How many comparisons the filter holds (Azure allows 15).
    public var comparisonCount: Int {
        switch self {
        case .compare: 1
        case .and(let a, let b), .or(let a, let b): a.comparisonCount + b.comparisonCount
        case .not(let a): a.comparisonCount
        case .written(_, let comparisons): comparisons
        }
    }

    /// A value as an OData literal.
    public static func literal(_ value: EdmValue) -> String {
        switch value {
        case .string(let s): "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .int32(let v): String(v)
        case .int64(let v): "\(v)L"
        case .double(let v): v.isFinite && v == v.rounded() && abs(v) < 1e15 ? String(format: "%.1f", v) : "\(v)"
        case .boolean(let v): v ? "true" : "false"
        case .dateTime(let d): "datetime'\(d.iso8601)'"
        case .guid: "guid'\(value.text)'"
        case .binary(let b): "X'" + b.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }
}
