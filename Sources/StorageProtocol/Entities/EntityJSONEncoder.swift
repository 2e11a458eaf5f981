/// Writes entities as OData JSON with `@odata.type` annotations, byte for byte the same
/// for the same entity.
///
/// Canonical form: `PartitionKey`, `RowKey`, then the other properties sorted byte-wise,
/// each followed directly by its `Name@odata.type` annotation where JSON cannot carry the
/// type by itself (Int64, DateTime, Guid, Binary, and every Double, so that `2.0` is never
/// read back as an Int32).
public enum EntityJSONEncoder {
    /// The entity as one line of JSON (no trailing newline).
    public static func encode(_ entity: TableEntity) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        append(entity, to: &out)
        return out
    }

    /// The entity's properties as a JSON object without its keys (`{}` when it has none): how
    /// the emulator stores a body beside its key columns.
    public static func encodeProperties(_ entity: TableEntity) -> [UInt8] {
        var out: [UInt8] = []
        // Once, not doubling past 256 bytes: a SpeakEasy event is about 1.2 KB.
        out.reserveCapacity(encodedLengthBound(entity))
        for (name, value) in entity.properties.sortedByName {
            appendProperty(name, value, to: &out)
        }
        // The first property's leading comma opens the object (removing it moved every byte
        // after it: a sixtieth of the emulator's batch inserts).
        if out.isEmpty { out.append(UInt8(ascii: "{")) } else { out[0] = UInt8(ascii: "{") }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// At least the length of ``encode(_:)``'s bytes, without encoding (what a batch's size
    /// budget needs; encoding each entity once more for it was a fourteenth of a seeding run).
    public static func encodedLengthBound(_ entity: TableEntity) -> Int {
        // `{"PartitionKey":…,"RowKey":…}`
        var length = 27 + JSONText.encodedLengthBound(entity.partitionKey) + JSONText.encodedLengthBound(entity.rowKey)
        for (name, value) in entity.properties {
            let nameLength = JSONText.encodedLengthBound(name)
            length += 2 + nameLength  // `,"name":`
            switch value {
            case .string(let s): length += JSONText.encodedLengthBound(s)
            case .binary(let b): length += 2 + (b.count + 2) / 3 * 4
            // Numbers, Booleans, dates and GUIDs: at most 40 bytes of text, quotes included.
            default: length += 40
            }
            // `,"name@odata.type":"Edm.DateTime"`
            if needsAnnotation(value) { length += 2 + nameLength + 11 + 14 }
        }
        return length
    }

    /// Appends the entity's JSON to `out`.
    public static func append(_ entity: TableEntity, to out: inout [UInt8]) {
        appendKeys(entity.partitionKey, entity.rowKey, to: &out)
        for (name, value) in entity.properties.sortedByName { appendProperty(name, value, to: &out) }
        out.append(UInt8(ascii: "}"))
    }

    private static let partitionKeyMember = Array(#"{"PartitionKey":"#.utf8)
    private static let rowKeyMember = Array(#","RowKey":"#.utf8)

    /// `{"PartitionKey":…,"RowKey":…`: an entity's opening.
    private static func appendKeys(_ partitionKey: String, _ rowKey: String, to out: inout [UInt8]) {
        out += partitionKeyMember
        JSONText.appendString(partitionKey, to: &out)
        out += rowKeyMember
        JSONText.appendString(rowKey, to: &out)
    }

    /// Appends an entity given as property names already sorted byte-wise and their values.
    public static func append(partitionKey: String, rowKey: String, names: [String], values: [EdmValue], to out: inout [UInt8]) {
        appendKeys(partitionKey, rowKey, to: &out)
        for (name, value) in zip(names, values) {
            appendProperty(name, value, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Appends `,"name":value` and, when the type needs it, `,"name@odata.type":"Edm.X"`.
    public static func appendProperty(_ name: String, _ value: EdmValue, to out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        JSONText.appendString(name, to: &out)
        out.append(UInt8(ascii: ":"))
        appendValue(value, to: &out)
        if needsAnnotation(value) {
            out.append(UInt8(ascii: ","))
            JSONText.appendString(name, to: &out)
            // `"name@odata.type"`: the closing quote moved past the suffix, no string made.
            out.removeLast()
            out.append(contentsOf: annotationSuffix)
            out.append(UInt8(ascii: ":"))
            JSONText.appendString(value.type.rawValue, to: &out)
        }
    }

    private static let annotationSuffix = Array("@odata.type\"".utf8)

    static func needsAnnotation(_ value: EdmValue) -> Bool {
        switch value {
        case .string, .int32, .boolean: false
        case .int64, .double, .dateTime, .guid, .binary: true
        }
    }

    static func appendValue(_ value: EdmValue, to out: inout [UInt8]) {
        switch value {
        case .string(let s): JSONText.appendString(s, to: &out)
        case .int32(let v): out.append(contentsOf: String(v).utf8)
        case .int64(let v): JSONText.appendString(String(v), to: &out)
        case .double(let v):
            if v.isFinite {
                out.append(contentsOf: EdmValue.doubleText(v).utf8)
            } else {
                JSONText.appendString(EdmValue.doubleText(v), to: &out)
            }
        case .boolean(let v): out.append(contentsOf: (v ? "true" : "false").utf8)
        case .dateTime(let d):
            out.append(UInt8(ascii: "\""))
            d.appendISO8601(to: &out)
            out.append(UInt8(ascii: "\""))
        case .guid, .binary: JSONText.appendString(value.text, to: &out)
        }
    }
}
