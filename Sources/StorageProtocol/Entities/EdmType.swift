/// The Entity Data Model property types Azure Table storage supports.
public enum EdmType: String, Sendable, CaseIterable {
    case string = "Edm.String"
    case int32 = "Edm.Int32"
    case int64 = "Edm.Int64"
    case double = "Edm.Double"
    case boolean = "Edm.Boolean"
    case dateTime = "Edm.DateTime"
    case guid = "Edm.Guid"
    case binary = "Edm.Binary"

    /// The case's position in ``allCases``.
    public var ordinal: Int {
        switch self {
        case .string: 0
        case .int32: 1
        case .int64: 2
        case .double: 3
        case .boolean: 4
        case .dateTime: 5
        case .guid: 6
        case .binary: 7
        }
    }

    // By case, not by the raw string (a raw-valued enum's default): every value a scan
    // counts is hashed with its type.
    public static func == (a: EdmType, b: EdmType) -> Bool { a.ordinal == b.ordinal }
    public func hash(into hasher: inout Hasher) { hasher.combine(UInt8(truncatingIfNeeded: ordinal)) }
}
