/// A table entity: its keys and its typed properties.
///
/// Server-owned values (Timestamp, ETag) are not properties here; they travel beside the
/// entity where a caller needs them. Keys, names and string values compare by their bytes,
/// as Azure compares them (`ExactString`).
public struct TableEntity: Sendable, Hashable {
    public var partitionKey: String
    public var rowKey: String
    /// Custom properties by name.
    public var properties: EntityProperties
    /// The ETag the service gave the entity when it was read (nil for one made here): what a
    /// later write of it is conditional on. Not part of the entity's value (``==``, hashing).
    public var etag: String? = nil

    public init(partitionKey: String, rowKey: String, properties: EntityProperties = [:]) {
        self.partitionKey = partitionKey
        self.rowKey = rowKey
        self.properties = properties
    }

    public subscript(name: String) -> EdmValue? {
        get { properties[name] }
        set { properties[name] = newValue }
    }

    public static func == (a: TableEntity, b: TableEntity) -> Bool {
        a.partitionKey.isExactly(b.partitionKey) && a.rowKey.isExactly(b.rowKey) && a.properties == b.properties
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactString(partitionKey))
        hasher.combine(ExactString(rowKey))
        hasher.combine(properties)
    }

    /// Property names in the canonical (byte-wise) order used by snapshots and plans.
    public var sortedPropertyNames: [String] {
        properties.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
