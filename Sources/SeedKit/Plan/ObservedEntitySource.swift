import AzureStorage

/// Where the planner reads a target's entities: page by page, in PartitionKey-then-RowKey
/// order, so a table is never held whole.
public protocol ObservedEntitySource: Sendable {
    /// The entities of `partitions` (sorted by their bytes) of `table`, in PartitionKey,
    /// then RowKey, order. Entities of other partitions may be interleaved; they are skipped.
    func pages(table: String, partitions: [String]) -> any ObservedEntityPages
}

/// One read of a table's entities, a page at a time.
public protocol ObservedEntityPages {
    /// The next page (never empty); nil after the last.
    mutating func next() async throws -> [TableEntity]?
}

/// The observed pages were not in PartitionKey-then-RowKey byte order — a service whose key
/// order differs from the byte order for some text (UTF-16 code unit order puts U+10000 and
/// above before U+E000–U+FFFF). The merge cannot use them; the caller plans again from the
/// whole observed state, sorted here.
public struct ObservedOrderError: Error, Sendable, CustomStringConvertible {
    public var table: String
    public var previous: (partitionKey: String, rowKey: String)
    public var next: (partitionKey: String, rowKey: String)

    public var description: String {
        "table \(table): entity (\(next.partitionKey), \(next.rowKey)) was listed after (\(previous.partitionKey), \(previous.rowKey)), out of byte order"
    }
}

extension ObservedState: ObservedEntitySource {
    /// The observed entities held in memory, each partition's sorted by RowKey bytes.
    public func pages(table: String, partitions: [String]) -> any ObservedEntityPages {
        let rows = self.tables[table]?.partitions ?? [:]
        return HeldPages(
            pages: partitions.compactMap { partition in
                guard let entities = rows[ExactString(partition)], !entities.isEmpty else { return nil }
                return entities.keys.sorted().map { entities[$0]! }
            })
    }
}

/// Pages already in memory.
struct HeldPages: ObservedEntityPages {
    var pages: [[TableEntity]]
    var position = 0

    mutating func next() -> [TableEntity]? {
        guard position < pages.count else { return nil }
        defer { position += 1 }
        return pages[position]
    }
}
