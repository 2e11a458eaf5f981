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
}
