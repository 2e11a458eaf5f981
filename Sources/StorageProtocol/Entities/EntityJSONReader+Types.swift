/// The typing rules for entity values in OData JSON (`nometadata`, `minimalmetadata` or
/// `fullmetadata`, or a snapshot line): `@odata.type` annotations decide types; without one, a
/// string is Edm.String, a boolean Edm.Boolean, an integer Edm.Int32 (Int64 when it does not
/// fit) and a number with a fraction or exponent Edm.Double. ``EntityJSONReader`` reads whole
/// entities from bytes with them — the one entity decoder of client, emulator and snapshots.
extension EntityJSONReader {
    static func decodeValue(_ value: JSONValue, annotation: String?, property: String) throws(EntityDecodingError) -> EdmValue {
        if let annotation {
            guard let type = EdmType(rawValue: annotation) else { throw EntityDecodingError("\(property): unknown type '\(annotation)'") }
            let text: String
            switch value {
            case .string(let s): text = s
            case .number(let n): text = n
            case .bool(let b): text = b ? "true" : "false"
            default: throw EntityDecodingError("\(property): a \(annotation) value cannot be \(value)")
            }
            // Azure takes a Boolean sent as text in any case ("False", as the Python SDK sends a
            // string annotated Edm.Boolean).
            if type == .boolean, case .string(let s) = value, ["true", "false"].contains(s.lowercased()) {
                return .boolean(s.lowercased() == "true")
            }
            guard let parsed = EdmValue.parse(text, as: type) ?? (type == .double ? Double(text).map(EdmValue.double) : nil) else {
                throw EntityDecodingError("\(property): '\(text)' is not a valid \(annotation)")
            }
            return parsed
        }
        switch value {
        case .string(let s): return .string(s)
        case .bool(let b): return .boolean(b)
        case .number(let n):
            if !n.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                if let v = Int32(n) { return .int32(v) }
                if let v = Int64(n) { return .int64(v) }
            }
            guard let d = Double(n) else { throw EntityDecodingError("\(property): '\(n)' is not a number") }
            return .double(d)
        case .null: throw EntityDecodingError("\(property): null is not a value Azure Tables stores")
        default: throw EntityDecodingError("\(property): arrays and objects are not entity values")
        }
    }
}

/// Why a JSON entity could not be read.
/// An entity as a query or read returned it: the entity plus the server-owned values that
/// came with it.
public struct QueriedEntity: Sendable {
    public var entity: TableEntity
    public var etag: String?
    public var timestamp: EdmDateTime?

    public init(entity: TableEntity, etag: String? = nil, timestamp: EdmDateTime? = nil) {
        self.entity = entity
        self.etag = etag
        self.timestamp = timestamp
    }
}

public struct EntityDecodingError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// The entity lacks a PartitionKey or RowKey string (a service answers PropertiesNeedValue).
    public var missingKey = false
    /// A name the entity gives twice (Azure answers DuplicatePropertiesSpecified, or
    /// DuplicateKeyPropertySpecified for PartitionKey and RowKey).
    public var duplicate: Duplicate?

    /// What was given twice.
    public enum Duplicate: Sendable { case property, key }

    /// More members than an entity can hold (a service answers TooManyProperties).
    public var tooManyProperties = false

    init(_ description: String, missingKey: Bool = false, duplicate: Duplicate? = nil, tooManyProperties: Bool = false) {
        self.description = description
        self.missingKey = missingKey
        self.duplicate = duplicate
        self.tooManyProperties = tooManyProperties
    }
}
