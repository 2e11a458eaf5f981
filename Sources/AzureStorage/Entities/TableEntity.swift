/// A table entity: its keys and its typed properties.
///
/// Server-owned values (Timestamp, ETag) are not properties here; they travel beside the
/// entity where a caller needs them.
public struct TableEntity: Sendable, Hashable {
    public var partitionKey: String
    public var rowKey: String
    /// Custom properties by name.
    public var properties: [String: EdmValue]

    public init(partitionKey: String, rowKey: String, properties: [String: EdmValue] = [:]) {
        self.partitionKey = partitionKey
        self.rowKey = rowKey
        self.properties = properties
    }

    public subscript(name: String) -> EdmValue? {
        get { properties[name] }
        set { properties[name] = newValue }
    }

    /// Property names in the canonical (byte-wise) order used by snapshots and plans.
    public var sortedPropertyNames: [String] {
        properties.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
