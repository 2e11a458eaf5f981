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
    /// The bytes of whole entities kept across every partition (small partitions keep theirs
    /// for rows and references), at most about ``keptBudget``.
    private(set) var keptBytes = 0
    let keptBudget: Int

    /// The default budget for kept entities: 32 MiB of Azure's measure.
    public static let defaultKeptBudget = 32 << 20

    public init(sampleSize: Int) { self.init(sampleSize: sampleSize, keepsKeys: true) }

    init(sampleSize: Int, keepsKeys: Bool, keptBudget: Int = defaultKeptBudget) {
        self.sampleSize = sampleSize
        self.keepsKeys = keepsKeys
        self.keptBudget = keptBudget
    }

    public mutating func observe(_ entity: TableEntity, table: String) {
        select(table, entity.partitionKey)
        let before = current!.observation.keptBytes
        current!.observation.observe(entity)
        keptBytes += current!.observation.keptBytes - before
        // Many small partitions would keep every entity of the account: past the budget, the
        // partition that crosses it lets its own go (the ones read before keep theirs).
        if keptBytes > keptBudget, current!.observation.keptBytes > 0 {
            keptBytes -= current!.observation.keptBytes
            current!.observation.stopKeeping(pastBudget: true)
        }
    }

    /// A generated entity, read as it is made (names and values side by side): what the
    /// fidelity report observes of the regenerated dataset, which keeps no keys and no sample.
    mutating func observe(_ entity: GeneratedEntity, table: String) {
        guard !keepsKeys, sampleSize == 0 else { return observe(entity.tableEntity, table: table) }
        select(table, entity.partitionKey)
        current!.observation.observeStatistics(entity)
    }

    /// Makes `partition` of `table` the ``current`` one.
    private mutating func select(_ table: String, _ partition: String) {
        if let current, current.observation.table == table, current.observation.partition.isExactly(partition) { return }
        if let current { done[current.key] = current.observation }
        let key = ExactString(table + "\u{0}" + partition)
        current = (
            key,
            done.removeValue(forKey: key) ?? PartitionObservation(table: table, partition: partition, sampleSize: sampleSize, keepsKeys: keepsKeys)
        )
    }

    /// Every partition seen, each with where `copies` wrote its entities (when it did).
    public func all(copies: CopiedEntityFiles? = nil) -> [PartitionObservation] {
        var all = Array(done.values) + (current.map { [$0.observation] } ?? [])
        for i in all.indices { all[i].copiedFile = copies?.path(table: all[i].table, partition: all[i].partition) }
        return all
    }
}
