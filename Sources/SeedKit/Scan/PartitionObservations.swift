import AzureStorage

/// What a scan saw of every partition it read, by table and PartitionKey compared by their
/// bytes (two keys Swift's `==` takes as equal, `é` and `e` + U+0301, are two partitions, as
/// Azure keeps them). Entities arrive a partition at a time (the service lists them in
/// PartitionKey order): the partition being read is kept aside, so an entity costs no lookup.
public struct PartitionObservations: Sendable {
    private var done: [ExactString: PartitionObservation] = [:]
    private var current: (key: ExactString, observation: PartitionObservation)?
    let sampleSize: Int
    let keepsKeys: Bool

    public init(sampleSize: Int) { self.init(sampleSize: sampleSize, keepsKeys: true) }

    init(sampleSize: Int, keepsKeys: Bool) {
        self.sampleSize = sampleSize
        self.keepsKeys = keepsKeys
    }

    public mutating func observe(_ entity: TableEntity, table: String) {
        if let current, current.observation.table == table, current.observation.partition.isExactly(entity.partitionKey) {
        } else {
            if let current { done[current.key] = current.observation }
            let key = ExactString(table + "\u{0}" + entity.partitionKey)
            current = (
                key,
                done.removeValue(forKey: key)
                    ?? PartitionObservation(table: table, partition: entity.partitionKey, sampleSize: sampleSize, keepsKeys: keepsKeys)
            )
        }
        current!.observation.observe(entity)
    }

    /// Every partition seen, each with where `copies` wrote its entities (when it did).
    public func all(copies: CopiedEntityFiles? = nil) -> [PartitionObservation] {
        var all = Array(done.values) + (current.map { [$0.observation] } ?? [])
        for i in all.indices { all[i].copiedFile = copies?.path(table: all[i].table, partition: all[i].partition) }
        return all
    }
}
