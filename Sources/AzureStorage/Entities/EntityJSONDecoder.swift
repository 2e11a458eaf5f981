/// Reads an entity from OData JSON (`nometadata`, `minimalmetadata` or `fullmetadata`, or a
/// snapshot line): `@odata.type` annotations decide types; without one, a string is
/// Edm.String, a boolean Edm.Boolean, an integer Edm.Int32 (Int64 when it does not fit) and
/// a number with a fraction or exponent Edm.Double.
public enum EntityJSONDecoder {
    /// The entity plus the server-owned values that came with it.
    public struct Decoded: Sendable {
        public var entity: TableEntity
        public var etag: String?
        public var timestamp: EdmDateTime?
    }

    public static func decode(_ node: JSONNode) throws(EntityDecodingError) -> Decoded {
        guard case .object(let members) = node else { throw EntityDecodingError("an entity must be a JSON object") }
        // Names are matched by their bytes (ExactString), as Azure matches them.
        var annotations: [ExactString: String] = [:]
        for (name, value) in members {
            guard let property = JSONParser.annotatedProperty(name) else { continue }
            guard let type = value.stringValue else { throw EntityDecodingError("\(name) must be a string") }
            annotations[ExactString(property)] = type
        }
        var pk: String?, rk: String?, etag: String?, timestamp: EdmDateTime?
        var properties = EntityProperties()
        for (name, value) in members {
            if JSONParser.annotatedProperty(name) != nil || JSONParser.isODataControl(name) {
                if name.isExactly("odata.etag") { etag = value.stringValue }
                continue
            }
            if name.isExactly("PartitionKey") { pk = value.stringValue }
            else if name.isExactly("RowKey") { rk = value.stringValue }
            else if name.isExactly("Timestamp") { if let text = value.stringValue { timestamp = EdmDateTime(iso8601: text) } }
            else { properties[name] = try decodeValue(value, annotation: annotations[ExactString(name)], property: name) }
        }
        guard let pk else { throw EntityDecodingError("the entity has no PartitionKey string") }
        guard let rk else { throw EntityDecodingError("the entity has no RowKey string") }
        for name in annotations.keys where properties[name.string] == nil && !JSONParser.isKeyOrTimestamp(name.string) {
            throw EntityDecodingError("\(name)@odata.type annotates a property that is not there")
        }
        return Decoded(entity: TableEntity(partitionKey: pk, rowKey: rk, properties: properties), etag: etag, timestamp: timestamp)
    }

    static func decodeValue(_ value: JSONNode, annotation: String?, property: String) throws(EntityDecodingError) -> EdmValue {
        if let annotation {
            guard let type = EdmType(rawValue: annotation) else { throw EntityDecodingError("\(property): unknown type '\(annotation)'") }
            let text: String
            switch value {
            case .string(let s): text = s
            case .number(let n): text = n
            case .bool(let b): text = b ? "true" : "false"
            default: throw EntityDecodingError("\(property): a \(annotation) value cannot be \(value)")
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
public struct EntityDecodingError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// The entity lacks a PartitionKey or RowKey string (a service answers PropertiesNeedValue).
    package var missingKey = false
    init(_ description: String, missingKey: Bool = false) {
        self.description = description
        self.missingKey = missingKey
    }
}
