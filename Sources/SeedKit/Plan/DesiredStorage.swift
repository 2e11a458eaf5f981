import AzureStorage

/// What a plan aims for, whatever made it — a dataset's desired state or a snapshot:
/// containers with their blobs, the tables and partitions owned, and the entities in groups
/// written one after another (referenced kinds first).
public struct DesiredStorage: Sendable {
    public var containers: [DesiredContainer]
    public var tables: [OwnedTable]
    public var groups: [EntityGroup]

    public init(containers: [DesiredContainer], tables: [OwnedTable], groups: [EntityGroup]) {
        self.containers = containers
        self.tables = tables
        self.groups = groups
    }
}

/// A table and the partitions in it that the desired state owns: only those are read,
/// compared, pruned and reset.
public struct OwnedTable: Sendable {
    public var name: String
    public var partitions: [String]

    public init(name: String, partitions: [String]) {
        self.name = name
        self.partitions = partitions
    }
}

/// Entities planned and written together: one dataset kind, or one snapshot table.
public struct EntityGroup: Sendable {
    public var table: String
    /// The dataset kind; nil for a snapshot's table.
    public var kind: String?
    public var partitions: [String]
    /// Natural key fields; empty means entities match by RowKey only.
    public var key: [String]
    /// Fields holding another kind's RowKey.
    public var rowKeyReferences: [(field: String, kind: String)]
    /// Opens the group's entities (of a shard, when given) in PartitionKey-then-RowKey byte order.
    let makeCursor: @Sendable (Shard?) throws -> any EntityCursor
    /// The group's RowKeys by partition, without building entities where possible.
    let allRowKeys: @Sendable () throws -> [ExactString: Set<ExactString>]
    /// The shard of the run, when it is one (``DesiredStorage/sharded(_:)``).
    public private(set) var shard: Shard?

    public init(
        table: String, kind: String?, partitions: [String], key: [String], rowKeyReferences: [(field: String, kind: String)],
        makeCursor: @escaping @Sendable () throws -> any EntityCursor,
        rowKeys: @escaping @Sendable () throws -> [ExactString: Set<ExactString>]
    ) {
        // A cursor that cannot skip: a shard filters what it makes.
        self.init(
            table: table, kind: kind, partitions: partitions, key: key, rowKeyReferences: rowKeyReferences,
            shardedCursor: { shard in
                let all = try makeCursor()
                return shard.map { ShardCursor(base: all, shard: $0) } ?? all
            }, rowKeys: rowKeys)
    }

    /// A group whose cursor can skip other shards' entities before making them.
    init(
        table: String, kind: String?, partitions: [String], key: [String], rowKeyReferences: [(field: String, kind: String)],
        shardedCursor: @escaping @Sendable (Shard?) throws -> any EntityCursor,
        rowKeys: @escaping @Sendable () throws -> [ExactString: Set<ExactString>]
    ) {
        self.table = table
        self.kind = kind
        self.partitions = partitions
        self.key = key
        self.rowKeyReferences = rowKeyReferences
        self.makeCursor = shardedCursor
        self.allRowKeys = rowKeys
    }

    /// The group's entities, one at a time, in PartitionKey-then-RowKey byte order.
    public func entities() throws -> any EntityCursor { try makeCursor(shard) }

    /// Every RowKey the desired state gives the group's table, by partition, whatever the shard.
    public func unshardedRowKeys() throws -> [ExactString: Set<ExactString>] { try allRowKeys() }

    /// The group's RowKeys by partition (of the shard, when it is one).
    func rowKeys() throws -> [ExactString: Set<ExactString>] {
        let all = try allRowKeys()
        guard let shard else { return all }
        return all.reduce(into: [:]) { out, pair in out[pair.key] = pair.value.filter { shard.owns(partitionKey: pair.key.string, rowKey: $0.string) }
        }
    }

    func sharded(_ shard: Shard) -> EntityGroup {
        var copy = self
        copy.shard = shard
        return copy
    }
}

extension GeneratedDataset {
    /// The desired state as a plan's target: one group per kind, referenced kinds first.
    public var storage: DesiredStorage {
        let groups = kindsInDependencyOrder.map { table, kind in
            EntityGroup(
                table: table.name, kind: kind.name, partitions: [kind.partition], key: kind.key,
                rowKeyReferences: kind.rowKeyReferences,
                shardedCursor: { shard in try table.cursor(ofKind: kind.name, shard: shard) },
                rowKeys: { try table.rowKeysByPartition() })
        }
        return DesiredStorage(containers: containers, tables: tables.map { OwnedTable(name: $0.name, partitions: $0.partitions) }, groups: groups)
    }
}
