/// Reads entities straight from OData JSON bytes, without building a ``JSONValue`` tree for
/// the whole document: the hot path of query pages (client) and stored entities
/// (emulator). The typing rules are in EntityJSONReader+Types.swift.
public enum EntityJSONReader {
    /// The entities of a query response (`{"odata.metadata":…,"value":[…]}`). A property that
    /// is `null` is one `$select` named and the entity lacks (Azure answers so): absent.
    public static func page(_ bytes: some Collection<UInt8>) throws -> [QueriedEntity] {
        var entities: [QueriedEntity] = []
        try forEachItem(ofPage: bytes) { parser in entities.append(try parser.entity(nullIsAbsent: true)) }
        return entities
    }

    /// How many entities a query page holds, each checked as a JSON object and none built: a
    /// count needs no entity (a keys-only count of a million entities built a million).
    public static func pageCount(_ bytes: some Collection<UInt8>) throws -> Int {
        var count = 0
        try forEachItem(ofPage: bytes) { parser in
            try parser.objectMembers { parser, _ in try parser.skipValue() }
            count += 1
        }
        return count
    }

    /// Calls `item` at each element of the page's `value` array; the page must be one JSON object.
    private static func forEachItem(ofPage bytes: some Collection<UInt8>, _ item: (inout JSONParser) throws -> Void) throws {
        var parser = JSONParser(bytes: Array(bytes))
        try parser.objectMembers { parser, name in
            guard name == "value" else {
                _ = try parser.value()
                return
            }
            guard parser.i < parser.bytes.count, parser.bytes[parser.i] == UInt8(ascii: "[") else {
                throw parser.fail("'value' must be an array")
            }
            try parser.arrayItems(item)
        }
        try parser.end()
    }

    /// One entity object (a stored entity, a snapshot line, a request or response body).
    /// `keys`, when given, are the entity's keys whatever the body says (a request that names
    /// its entity in the URL). `nullIsAbsent`: a response to a read with `$select`, where `null`
    /// is a property named and absent; elsewhere (a request body, a stored entity) a `null` is
    /// refused, as Azure refuses it.
    public static func entity(
        _ bytes: some Collection<UInt8>, keys: (partitionKey: String, rowKey: String)? = nil, nullIsAbsent: Bool = false
    ) throws -> QueriedEntity {
        var parser = JSONParser(bytes: Array(bytes))
        let decoded: QueriedEntity
        do {
            decoded = try parser.entity(keys: keys, nullIsAbsent: nullIsAbsent)
        } catch let error as EntityDecodingError where error.missingKey {
            // Malformed JSON is reported before missing keys, as when the whole body was
            // parsed first: text after the object makes it invalid JSON.
            try parser.end()
            throw error
        }
        try parser.end()
        return decoded
    }
}

extension JSONParser {
    /// The end of the document: only white space may follow.
    mutating func end() throws(JSONParseError) {
        skipSpace()
        guard i == bytes.count else { throw fail("unexpected text after the value") }
    }

    /// An entity object at the cursor: keys, server values and typed properties.
    mutating func entity(keys: (partitionKey: String, rowKey: String)? = nil, nullIsAbsent: Bool = false) throws -> QueriedEntity {
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { throw EntityDecodingError("an entity must be a JSON object") }
        // Annotations may come before or after their values, so values wait for the end.
        var annotations: [(String, String)] = []
        var values: [(String, JSONValue)] = []
        var pk: String?
        var rk: String?
        var etag: String?
        var timestamp: EdmDateTime?
        var sawPartitionKey = false
        var sawRowKey = false
        // Past a few annotations they are also indexed by name, so a body of thousands costs
        // a lookup each, not a scan of the others (a quadratic scan once held the emulator
        // for seconds on one 300 KB body).
        var annotationIndex: [ExactString: String]?
        /// Names given a null where null means absent (a merge): still names given once.
        var nulls: [String] = []
        // Names are told apart by their bytes: a String is built only for a property's name
        // (building, then comparing, each of a full-metadata entity's eleven names was a
        // quarter of reading it).
        try objectMembersByBytes { parser, name in
            // `odata.id`, `odata.editLink`, `odata.type`: checked as JSON, never built (a
            // full-metadata page holds three such strings per entity).
            let annotated = Self.annotatedProperty(name)
            if annotated == nil, Self.isODataControl(name), !name.elementsEqual(Self.etagName) {
                try parser.skipValue()
                return
            }
            let value = try parser.value()
            if let property = annotated {
                // An annotation of an annotation (`X@odata.type@odata.type`, which the Python SDK
                // may send) says nothing of a value: Azure ignores it, and so does this reader.
                if Self.annotatedProperty(property) != nil { return }
                guard let type = value.stringValue else { throw EntityDecodingError("\(String(decoding: name, as: UTF8.self)) must be a string") }
                let annotatedName = String(decoding: property, as: UTF8.self)
                // Two types for one property: which one counts is not for a reader to guess.
                if annotationIndex == nil, annotations.count == Self.indexedPast {
                    annotationIndex = Dictionary(annotations.map { (ExactString($0.0), $0.1) }, uniquingKeysWith: { $1 })
                }
                let repeated =
                    annotationIndex == nil
                    ? annotations.contains { $0.0.isExactly(annotatedName) }
                    : annotationIndex!.updateValue(type, forKey: ExactString(annotatedName)) != nil
                if repeated { throw Self.given(twice: name) }
                annotations.append((annotatedName, type))
            } else if name.elementsEqual(Self.etagName) {
                etag = value.stringValue
            } else if name.elementsEqual(Self.partitionKeyName) {
                // A JSON object with a name twice is not one entity (JSON leaves it to each
                // reader; Azure refuses it): taking the last would store what a reader that
                // took the first never sent.
                if sawPartitionKey { throw Self.given(twice: name, key: true) }
                sawPartitionKey = true
                pk = value.stringValue
            } else if name.elementsEqual(Self.rowKeyName) {
                if sawRowKey { throw Self.given(twice: name, key: true) }
                sawRowKey = true
                rk = value.stringValue
            } else if name.elementsEqual(Self.timestampName) {
                if let text = value.stringValue { timestamp = EdmDateTime(iso8601: text) }
            } else if nullIsAbsent && value == .null {
                nulls.append(String(decoding: name, as: UTF8.self))
            } else {
                values.append((String(decoding: name, as: UTF8.self), value))
            }
            // An entity has at most 252 properties and the three system ones, each annotated
            // at most once: more members than that is refused before any is matched.
            if values.count + annotations.count + nulls.count > Self.memberLimit {
                throw EntityDecodingError(
                    "the entity has more than \(StorageNames.maxProperties) properties", tooManyProperties: true)
            }
        }
        guard let pk = keys?.partitionKey ?? pk else { throw EntityDecodingError("the entity has no PartitionKey string", missingKey: true) }
        guard let rk = keys?.rowKey ?? rk else { throw EntityDecodingError("the entity has no RowKey string", missingKey: true) }
        // Names are matched by their bytes, as Azure matches them (ExactString).
        var properties = EntityProperties(minimumCapacity: values.count)
        for (name, value) in values {
            // Each annotation is given once (a second one is refused above).
            let annotation = annotationIndex.map { $0[ExactString(name)] } ?? annotations.first { $0.0.isExactly(name) }?.1
            let decoded = try EntityJSONReader.decodeValue(value, annotation: annotation, property: name)
            guard properties.insertNew(name, decoded) else { throw Self.given(twice: Array(name.utf8)[...]) }
        }
        if !nulls.isEmpty {
            var seen = Set<ExactString>()
            for name in nulls where properties[name] != nil || !seen.insert(ExactString(name)).inserted {
                throw Self.given(twice: Array(name.utf8)[...])
            }
        }
        for (name, _) in annotations where properties[name] == nil && !Self.isKeyOrTimestamp(name) && !nullIsAbsent {
            throw EntityDecodingError("\(name)@odata.type annotates a property that is not there")
        }
        // Keys are strings: Azure refuses an entity whose body gives a PartitionKey or RowKey of
        // another type (an insert); a write addressed by its URL takes the keys from there.
        for (name, type) in annotations
        where keys == nil && (name.isExactly("PartitionKey") || name.isExactly("RowKey")) && !type.isExactly("Edm.String") {
            throw EntityDecodingError("\(name) must be an Edm.String, not \(type)")
        }
        return QueriedEntity(entity: TableEntity(partitionKey: pk, rowKey: rk, properties: properties), etag: etag, timestamp: timestamp)
    }

    private static func given(twice name: ArraySlice<UInt8>, key: Bool = false) -> EntityDecodingError {
        EntityDecodingError("\(String(decoding: name, as: UTF8.self)) is given more than once", duplicate: key ? .key : .property)
    }

    /// Annotations scanned before they are indexed by name.
    private static let indexedPast = 8
    /// Values, nulls and annotations an entity can hold: each property and system property
    /// once, and an annotation of each.
    private static let memberLimit = 2 * (StorageNames.maxProperties + 3)

    private static let typeSuffix = Array("@odata.type".utf8)
    private static let etagName = Array("odata.etag".utf8)
    private static let partitionKeyName = Array("PartitionKey".utf8)
    private static let rowKeyName = Array("RowKey".utf8)
    private static let timestampName = Array("Timestamp".utf8)
    private static let odataPrefix = Array("odata.".utf8)
    private static let atODataPrefix = Array("@odata.".utf8)

    /// The property a `Name@odata.type` member's name annotates, as bytes; nil for any other name.
    static func annotatedProperty(_ name: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard name.last == UInt8(ascii: "e"), name.count > typeSuffix.count, name.suffix(typeSuffix.count).elementsEqual(typeSuffix) else {
            return nil
        }
        return name.dropLast(typeSuffix.count)
    }

    /// ``isODataControl(_:)`` of a name's bytes.
    static func isODataControl(_ name: ArraySlice<UInt8>) -> Bool {
        guard let first = name.first, first == UInt8(ascii: "o") || first == UInt8(ascii: "@") else { return false }
        return name.starts(with: odataPrefix) || name.starts(with: atODataPrefix)
    }

    /// `Name` of a `Name@odata.type` member, else nil (compared as bytes: String's
    /// `hasSuffix` compares grapheme by grapheme).
    static func annotatedProperty(_ name: String) -> String? {
        let utf8 = name.utf8
        // Most names are properties: the last byte turns them away before the suffix is compared.
        guard utf8.last == UInt8(ascii: "e"), utf8.count > typeSuffix.count, utf8.suffix(typeSuffix.count).elementsEqual(typeSuffix) else {
            return nil
        }
        return String(name.utf8.dropLast(typeSuffix.count))!
    }

    /// PartitionKey, RowKey or Timestamp, by bytes (`==` would take `Partition\u{212A}ey`, with
    /// a Kelvin sign, for `PartitionKey`).
    public static func isKeyOrTimestamp(_ name: String) -> Bool {
        name.isExactly("PartitionKey") || name.isExactly("RowKey") || name.isExactly("Timestamp")
    }

    /// `odata.*` and `@odata.*` members carry metadata, not properties.
    static func isODataControl(_ name: String) -> Bool {
        let utf8 = name.utf8
        // The first byte turns most names away before a prefix is compared.
        guard let first = utf8.first, first == UInt8(ascii: "o") || first == UInt8(ascii: "@") else { return false }
        return utf8.starts(with: "odata.".utf8) || utf8.starts(with: "@odata.".utf8)
    }
}
