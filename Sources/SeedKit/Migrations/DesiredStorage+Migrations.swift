import AzureStorage
import Foundation

/// One desired state (issue 47): what `plan`, `apply` and `verify` compare a target with is
/// the dataset as the migrations its ledger records as applied leave it — the same operations
/// `migrate apply` runs, simulated in memory over the desired entities and blobs, in order. So
/// after `migrate apply`, `plan` shows no change, and a re-seed never puts migrated data back
/// in its old shape.
extension DesiredStorage {
    /// The desired state after `migrations`, in the order given.
    public func migrated(by migrations: [Migration]) -> DesiredStorage {
        var state = self
        for migration in migrations {
            for operation in migration.operations { state.apply(operation) }
        }
        return state
    }

    private mutating func apply(_ operation: MigrationOperation) {
        switch operation {
        case .createTable(let name):
            if !tables.contains(where: { Self.sameTable($0.name, name) }) { tables.append(OwnedTable(name: name, partitions: [])) }
        case .deleteTable(let name):
            tables.removeAll { Self.sameTable($0.name, name) }
            groups.removeAll { Self.sameTable($0.table, name) }
        case .copyTable(let from, let to):
            // `to` holds `from`'s entities as they are now, matched by their keys alone.
            tables.removeAll { Self.sameTable($0.name, to) }
            groups.removeAll { Self.sameTable($0.table, to) }
            if let owned = tables.first(where: { Self.sameTable($0.name, from) }) {
                tables.append(OwnedTable(name: to, partitions: owned.partitions))
            }
            for group in groups where Self.sameTable(group.table, from) {
                let cursor = group.makeCursor
                groups.append(
                    EntityGroup(
                        table: to, kind: nil, partitions: group.partitions, key: [], rowKeyReferences: [], shardedCursor: cursor,
                        rowKeys: group.allRowKeys))
            }
        case .entities(let step):
            // A lookup reads its table as the operations so far leave it, when first asked.
            // (One read from the target already, a table the dataset does not hold, is kept.)
            let lookupSources = step.lookup.flatMap { spec in
                spec.isRead ? nil : groups.filter { Self.sameTable($0.table, spec.fromTable) }.map(\.makeCursor)
            }
            for (i, group) in groups.enumerated() where Self.sameTable(group.table, step.table) {
                let base = group.makeCursor
                let rekeys = if case .rekey = step.change { true } else { false }
                groups[i] = EntityGroup(
                    table: group.table, kind: group.kind, partitions: group.partitions, key: group.key, rowKeyReferences: group.rowKeyReferences,
                    shardedCursor: { shard in
                        let migrated = MigratedCursor(base: try base(shard), step: step, lookupSources: lookupSources)
                        // New keys break the order the planner merges in: sorted again.
                        return rekeys ? SortedCursor(base: migrated) : migrated
                    }, rowKeys: group.allRowKeys)
            }
        case .blobs(let step):
            applyBlobs(step)
        }
    }

    private mutating func applyBlobs(_ step: BlobStep) {
        guard let source = containers.firstIndex(where: { $0.name.utf8.elementsEqual(step.container.utf8) }) else { return }
        let selected = containers[source].blobs.filter { step.selects($0.name) }
        guard !selected.isEmpty else { return }
        let names = Set(selected.map { ExactString($0.name) })
        switch step.change {
        case .delete:
            containers[source].blobs.removeAll { names.contains(ExactString($0.name)) }
        case .move(let toContainer, let toPrefix):
            containers[source].blobs.removeAll { names.contains(ExactString($0.name)) }
            let moved = selected.map { blob -> DesiredBlob in
                var blob = blob
                blob.name = toPrefix + String(decoding: blob.name.utf8.dropFirst(step.prefix.utf8.count), as: UTF8.self)
                return blob
            }
            let target: Int
            if let found = containers.firstIndex(where: { $0.name.utf8.elementsEqual(toContainer.utf8) }) {
                target = found
            } else {
                containers.append(DesiredContainer(name: toContainer, access: containers[source].access, blobs: []))
                target = containers.count - 1
            }
            let arriving = Set(moved.map { ExactString($0.name) })
            containers[target].blobs.removeAll { arriving.contains(ExactString($0.name)) }
            containers[target].blobs = (containers[target].blobs + moved).sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        case .setProperties(let contentType, let cacheControl, let metadata):
            for index in containers[source].blobs.indices where names.contains(ExactString(containers[source].blobs[index].name)) {
                var blob = containers[source].blobs[index]
                if let contentType { blob.contentType = contentType }
                if cacheControl != nil || !metadata.isEmpty {
                    var properties =
                        blob.stored
                        ?? BlobProperties(
                            name: blob.name, contentLength: blob.size, contentType: blob.contentType, contentMD5: blob.md5Base64, metadata: [:])
                    properties.contentType = blob.contentType
                    if let cacheControl { properties.cacheControl = cacheControl }
                    properties.metadata.merge(metadata) { _, new in new }
                    blob.properties = properties
                } else if var properties = blob.properties {
                    properties.contentType = blob.contentType
                    blob.properties = properties
                }
                containers[source].blobs[index] = blob
            }
        }
    }

    /// Azure's table names ignore case.
    static func sameTable(_ a: String, _ b: String) -> Bool { a.lowercased() == b.lowercased() }
}

/// A group's entities as one applied entity step leaves them: changed in place, or gone.
struct MigratedCursor: EntityCursor {
    var base: any EntityCursor
    var step: EntityStep
    /// A lookup's table, as cursors over it; read on the first entity, then dropped.
    var lookupSources: [@Sendable (Shard?) throws -> any EntityCursor]?

    mutating func next() async throws -> TableEntity? {
        if let sources = lookupSources, let spec = step.lookup {
            var entries: [(partitionKey: String, rowKey: String, value: EdmValue)] = []
            for source in sources {
                var cursor = try source(nil)
                while let entity = try await cursor.next() {
                    if let value = entity[spec.property] { entries.append((entity.partitionKey, entity.rowKey, value)) }
                    guard entries.count <= LookupValues.maxEntities else {
                        throw GenerationError(
                            "lookup: table \(spec.fromTable) holds more than \(LookupValues.maxEntities) entities with \(spec.property)")
                    }
                }
            }
            step = step.withLookup(LookupValues(entries))
            lookupSources = nil
        }
        while let entity = try await base.next() {
            guard step.selects(entity) else { return entity }
            switch step.change.apply(to: entity) {
            // An entity the step cannot change stays as it is (`migrate apply` would have
            // stopped on it in the target, and did not: the target never held it so).
            case .unchanged, .failed: return entity
            case .replaced(let changed), .rekeyed(let changed): return changed
            case .deleted: continue
            }
        }
        return nil
    }
}

/// A cursor's entities in PartitionKey-then-RowKey byte order, gathered first (after a rekey).
struct SortedCursor: EntityCursor {
    var base: any EntityCursor
    private var sorted: [TableEntity]?
    private var index = 0

    init(base: any EntityCursor) { self.base = base }

    mutating func next() async throws -> TableEntity? {
        if sorted == nil {
            var all: [TableEntity] = []
            while let entity = try await base.next() { all.append(entity) }
            sorted = all.sorted {
                $0.partitionKey.utf8.elementsEqual($1.partitionKey.utf8)
                    ? $0.rowKey.utf8.lexicographicallyPrecedes($1.rowKey.utf8) : $0.partitionKey.utf8.lexicographicallyPrecedes($1.partitionKey.utf8)
            }
        }
        guard let sorted, index < sorted.count else { return nil }
        index += 1
        return sorted[index - 1]
    }
}
