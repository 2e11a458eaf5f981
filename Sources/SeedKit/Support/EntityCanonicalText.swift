import AzureStorage

extension TableEntity {
    /// The entity as text that is equal exactly when two entities are equal as Azure holds
    /// them: keys, then each property's name, type and text in name byte order — bytes, never
    /// Swift's canonical equivalence (`Café` precomposed and decomposed differ).
    public var canonicalText: String {
        let properties = self.properties.map { ($0.key, $0.value) }.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        return ([partitionKey, rowKey] + properties.map { "\($0.0)\u{0}\($0.1.type.rawValue)\u{0}\($0.1.text)" }).joined(separator: "\u{1}")
    }
}
