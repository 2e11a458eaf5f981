import Foundation

/// One typed property value of a table entity.
public enum EdmValue: Sendable, CustomStringConvertible {
    case string(String)
    case int32(Int32)
    case int64(Int64)
    case double(Double)
    case boolean(Bool)
    case dateTime(EdmDateTime)
    case guid(UUID)
    case binary([UInt8])

    public var type: EdmType {
        switch self {
        case .string: .string
        case .int32: .int32
        case .int64: .int64
        case .double: .double
        case .boolean: .boolean
        case .dateTime: .dateTime
        case .guid: .guid
        case .binary: .binary
        }
    }

    /// The value as text: what a template sees and what a natural key is made of.
    public var text: String {
        switch self {
        case .string(let s): s
        case .int32(let v): String(v)
        case .int64(let v): String(v)
        case .double(let v): EdmValue.doubleText(v)
        case .boolean(let v): v ? "true" : "false"
        case .dateTime(let d): d.iso8601
        case .guid(let g): g.uuidString.lowercased()
        case .binary(let b): Data(b).base64EncodedString()
        }
    }

    public var description: String { text }

    /// JSON/OData text for a double: `NaN`, `Infinity`, `-Infinity` or the shortest
    /// round-tripping decimal.
    static func doubleText(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v < 0 ? "-Infinity" : "Infinity" }
        return "\(v)"
    }

    /// Parses text as a value of the given type; nil when the text is not valid for it.
    public static func parse(_ text: String, as type: EdmType) -> EdmValue? {
        switch type {
        case .string: return .string(text)
        case .int32: return Int32(text).map(EdmValue.int32)
        case .int64: return Int64(text).map(EdmValue.int64)
        case .double:
            switch text {
            case "NaN": return .double(.nan)
            case "Infinity": return .double(.infinity)
            case "-Infinity": return .double(-.infinity)
            default: return Double(text).flatMap { $0.isFinite ? .double($0) : nil }
            }
        case .boolean:
            switch text {
            case "true": return .boolean(true)
            case "false": return .boolean(false)
            default: return nil
            }
        case .dateTime: return EdmDateTime(iso8601: text).map(EdmValue.dateTime)
        case .guid: return UUID(uuidString: text).map(EdmValue.guid)
        case .binary: return Data(base64Encoded: text).map { .binary([UInt8]($0)) }
        }
    }
}

extension EdmValue: Hashable {
    /// Values are equal when they have the same type and the same value; strings compare by
    /// their bytes, as Azure does (not by canonical equivalence); doubles compare by bit
    /// pattern so that NaN equals NaN and a re-run reports it unchanged.
    public static func == (lhs: EdmValue, rhs: EdmValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): a.isExactly(b)
        case (.int32(let a), .int32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern || (a == b && a != 0)
        case (.boolean(let a), .boolean(let b)): a == b
        case (.dateTime(let a), .dateTime(let b)): a == b
        case (.guid(let a), .guid(let b)): a == b
        case (.binary(let a), .binary(let b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        switch self {
        case .string(let v): hasher.combine(ExactString(v))
        case .int32(let v): hasher.combine(v)
        case .int64(let v): hasher.combine(v)
        case .double(let v): hasher.combine(v.bitPattern)
        case .boolean(let v): hasher.combine(v)
        case .dateTime(let v): hasher.combine(v)
        case .guid(let v): hasher.combine(v)
        case .binary(let v): hasher.combine(v)
        }
    }
}
