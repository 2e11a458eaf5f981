import AzureStorage

/// One of N disjoint parts of a run (`--shard I/N`): an entity belongs to the shard its
/// (PartitionKey, RowKey) hashes to, a blob to the one its container and name hash to. The
/// hash is FNV-1a over the bytes, fixed across processes and machines, so N processes on N
/// machines each take their part with no shared state, and together do what one process does.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// 0-based.
    public let index: Int
    public let count: Int

    public init?(index: Int, count: Int) {
        guard count >= 1, count <= 100_000, index >= 0, index < count else { return nil }
        self.index = index
        self.count = count
    }

    /// `I/N`, 0 ≤ I < N.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]) else { return nil }
        self.init(index: i, count: n)
    }

    public var description: String { "\(index)/\(count)" }

    public func owns(partitionKey: String, rowKey: String) -> Bool {
        count == 1 || Int(StableHash.keys(partitionKey, rowKey) % UInt64(count)) == index
    }

    /// Whether the shard owns a whole partition: `migrate` splits by partition, so a batch (one
    /// partition) is one shard's, and a rekey's entity is moved by the shard of its old keys.
    public func owns(partition: String) -> Bool {
        count == 1 || Int(StableHash.keys(partition, "") % UInt64(count)) == index
    }

    public func owns(container: String, blob: String) -> Bool {
        count == 1 || Int(StableHash.keys(container, blob) % UInt64(count)) == index
    }
}

/// FNV-1a over two strings' bytes with a separator: the same on every run and machine
/// (Swift's `Hasher` is seeded per process).
public enum StableHash {
    public static func keys(_ first: String, _ second: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in first.utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        h = (h ^ 0xff) &* 0x100_0000_01b3
        for byte in second.utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return h
    }
}

/// The entities of a cursor that belong to a shard.
struct ShardCursor: EntityCursor {
    var base: any EntityCursor
    let shard: Shard

    mutating func next() async throws -> TableEntity? {
        while let entity = try await base.next() {
            if shard.owns(partitionKey: entity.partitionKey, rowKey: entity.rowKey) { return entity }
        }
        return nil
    }
}

extension DesiredStorage {
    /// The part of this desired state that `shard` owns: its blobs and entities. Containers
    /// and tables stay whole (every shard creates them, idempotently). Generated kinds build
    /// only the shard's entities.
    public func sharded(_ shard: Shard) -> DesiredStorage {
        guard shard.count > 1 else { return self }
        var copy = self
        for i in copy.containers.indices {
            let name = copy.containers[i].name
            copy.containers[i].blobs.removeAll { !shard.owns(container: name, blob: $0.name) }
        }
        copy.groups = groups.map { $0.sharded(shard) }
        return copy
    }
}
