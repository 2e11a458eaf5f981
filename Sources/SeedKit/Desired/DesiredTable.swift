import AzureStorage

/// A table the dataset wants and the entities it should hold, made on demand in
/// PartitionKey-then-RowKey order so that a million entities never sit in memory at once.
public struct DesiredTable: Sendable {
    public let name: String
    let engines: [KindEngine]
    let datasetFile: String

    /// How many entities the table should hold.
    public var entityCount: Int { engines.reduce(0) { $0 + $1.count } }

    /// The partitions the dataset owns in this table, sorted.
    public var partitions: [String] {
        Set(engines.map(\.spec.partition)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The kinds stored in this table.
    public var kinds: [KindSpec] { engines.map(\.spec) }

    /// Calls `body` with every entity in PartitionKey, then RowKey, order.
    public func forEachEntity(_ body: (GeneratedEntity) throws -> Void) throws {
        for partition in partitions {
            let members = engines.filter { $0.spec.partition == partition }
            if members.count == 1 {
                try forEach(of: members[0], body)
                continue
            }
            // Several kinds share the partition: merge their RowKey orders.
            var all: [(rowKey: RowKeyBits, identity: UInt128, ordinal: Int, index: Int, kind: Int)] = []
            for (k, engine) in members.enumerated() {
                for (ordinal, item) in try engine.sortedIdentities(datasetFile: datasetFile).enumerated() {
                    all.append((item.rowKey, item.identity, ordinal, item.index, k))
                }
            }
            all.sort { $0.rowKey < $1.rowKey }
            var builders = members.map { EntityBuilder(engine: $0) }
            for item in all {
                if let made = members[item.kind].materialized {
                    try body(made[item.ordinal])
                } else {
                    try body(try builders[item.kind].build(identity: item.identity, ordinal: item.ordinal, index: item.index, rowKey: item.rowKey))
                }
            }
        }
    }

    /// Calls `body` with every entity of one kind, in RowKey order.
    public func forEachEntity(ofKind kind: String, _ body: (GeneratedEntity) throws -> Void) throws {
        guard let engine = engines.first(where: { $0.spec.name == kind }) else { return }
        try forEach(of: engine, body)
    }

    /// The entities of kind `kind` one at a time, in RowKey order (none for an unknown kind).
    func cursor(ofKind kind: String, shard: Shard? = nil) throws -> any EntityCursor {
        guard let engine = engines.first(where: { $0.spec.name == kind }) else { return EmptyCursor() }
        if let file = engine.copiedFile {
            let copied = CopiedEntityCursor(lines: try SnapshotTableCursor(file: file), spec: engine.spec)
            guard let shard, shard.count > 1 else { return copied }
            return ShardCursor(base: copied, shard: shard)
        }
        return PrefetchingCursor(try KindCursor(engine: engine, datasetFile: datasetFile, shard: shard))
    }

    /// The RowKeys of every entity of the table, by partition, without building the
    /// entities (32 bytes an entity while sorting, then the key strings).
    public func rowKeysByPartition() throws -> [ExactString: Set<ExactString>] {
        var keys: [ExactString: Set<ExactString>] = [:]
        for engine in engines {
            let partition = ExactString(engine.spec.partition)
            var set = keys[partition] ?? []
            if let file = engine.copiedFile {
                try CopiedEntityReader.forEach(file, kind: engine.spec) { entity, _ in set.insert(ExactString(entity.rowKey)) }
            } else if let made = engine.materialized {
                for entity in made { set.insert(ExactString(entity.rowKey)) }
            } else {
                for item in try engine.sortedIdentities(datasetFile: datasetFile) { set.insert(ExactString(item.rowKey.text)) }
            }
            keys[partition] = set
        }
        return keys
    }

    private func forEach(of engine: KindEngine, _ body: (GeneratedEntity) throws -> Void) throws {
        if let file = engine.copiedFile {
            // Read again, a line at a time; a line that changed since is refused as before.
            var failure: (any Error)?
            try CopiedEntityReader.forEach(file, kind: engine.spec) { entity, _ throws(GenerationError) in
                guard failure == nil else { return }
                do { try body(CopiedEntityReader.generated(entity)) } catch { failure = error }
            }
            if let failure { throw failure }
            return
        }
        if let made = engine.materialized {
            for entity in made { try body(entity) }
            return
        }
        try ChunkedBuild.forEach(engine, identities: try engine.sortedIdentities(datasetFile: datasetFile), body)
    }
}
