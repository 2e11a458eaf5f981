/// An entity's custom properties by name, names matched by their bytes as Azure matches
/// them: NFC `"Café"` and NFD `"Cafe\u{301}"` are two properties, never one (a `[String: …]`
/// dictionary would merge them and lose a value).
public struct EntityProperties: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    private var storage: [ExactString: EdmValue]

    public init() { storage = [:] }

    public init(minimumCapacity: Int) { storage = Dictionary(minimumCapacity: minimumCapacity) }

    /// Literal names are distinct by construction; a repeated literal name keeps the last value.
    public init(dictionaryLiteral elements: (String, EdmValue)...) {
        storage = Dictionary(elements.map { (ExactString($0.0), $0.1) }, uniquingKeysWith: { $1 })
    }

    /// The value of the property whose name has exactly these bytes.
    public subscript(name: String) -> EdmValue? {
        get { storage[ExactString(name)] }
        set { storage[ExactString(name)] = newValue }
    }

    /// Adds a property not there yet; false (and nothing changed) when its name is. One
    /// lookup, where a read then a write would hash the name twice.
    public mutating func insertNew(_ name: String, _ value: EdmValue) -> Bool {
        let key = ExactString(name)
        guard let old = storage.updateValue(value, forKey: key) else { return true }
        storage[key] = old
        return false
    }

    public var count: Int { storage.count }
    public var isEmpty: Bool { storage.isEmpty }

    /// The properties sorted by the bytes of their names: names and values together, so a
    /// writer needs no second lookup of each value.
    public var sortedByName: [(name: String, value: EdmValue)] {
        // The standard sort comparing UTF-8 views: an insertion sort comparing with memcmp
        // was slower (980 against 575 ns for eight names), each comparison copying small
        // strings out to read their bytes.
        storage.sorted { $0.key.string.utf8.lexicographicallyPrecedes($1.key.string.utf8) }.map { ($0.key.string, $0.value) }
    }

    /// The names, in no particular order.
    public var keys: [String] { storage.keys.map(\.string) }

    /// The names, as exact strings for sets and dictionaries of names.
    public var exactKeys: Dictionary<ExactString, EdmValue>.Keys { storage.keys }

    public func makeIterator() -> Iterator { Iterator(base: storage.makeIterator()) }

    public struct Iterator: IteratorProtocol {
        var base: Dictionary<ExactString, EdmValue>.Iterator
        public mutating func next() -> (key: String, value: EdmValue)? {
            base.next().map { (key: $0.key.string, value: $0.value) }
        }
    }
}
