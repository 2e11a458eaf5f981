import AzureStorage
import Crypto

/// Plans a desired state's entities against a target's by merging two streams in
/// PartitionKey-then-RowKey byte order — the group's desired entities and the pages read
/// from the target — and handing each action on as it is made (``MergeOutput``), so memory
/// holds neither the table nor, for a streaming apply, the plan: only what a partition's end
/// decides (a natural-key kind's unmatched entities on both sides, and the deletes).
///
/// Groups are merged one after another, referenced kinds first. An entity matches the
/// observed one under the same keys. In a group with a natural key, a desired entity with
/// no observed entity under its RowKey waits, and so does every observed entity no desired
/// one matched: at the group's end they are paired by natural key, so entities written
/// with foreign RowKeys (the original program's random GUIDs) are recognised instead of
/// created again. Only those unmatched entities are held. A recognised entity keeps its
/// RowKey, and later kinds' fields that reference it (`SpeakerKey`) are rewritten to it.
///
/// Keys are compared by their bytes, as Azure compares them: an NFC and an NFD RowKey are
/// two entities.
struct EntityMerge {
    let desired: DesiredStorage
    let source: any ObservedEntitySource
    let existingTables: Set<String>
    let prune: Bool
    let digests: Bool

    /// Passes still to make over each (table, partition): more than one when kinds share a
    /// partition. Entities no group matched are leftovers only after the last.
    private var passesLeft: [TablePartition: Int] = [:]
    /// Partitions already read once (their digest is taken on the first read).
    private var read: Set<TablePartition> = []
    /// Desired RowKey → the RowKey it exists under, per kind, for recognised entities.
    private var remap: [String: [ExactString: String]] = [:]
    /// Observed RowKeys recognised by natural key in an earlier pass over a shared partition.
    private var recognised: [TablePartition: Set<ExactString>] = [:]
    /// Entities to delete, each with the ETag read (the delete is conditional on it).
    private var deletes: [TablePartition: [ExactString: String?]] = [:]
    /// SHA-256 of each partition's observed entities, in RowKey order (with `digests`).
    private(set) var partitionDigests: [TablePartition: SHA256.Digest] = [:]

    init(desired: DesiredStorage, source: any ObservedEntitySource, existingTables: Set<String>, prune: Bool, digests: Bool) {
        self.desired = desired
        self.source = source
        self.existingTables = existingTables
        self.prune = prune
        self.digests = digests
        for group in desired.groups {
            for partition in Set(group.partitions.map { ExactString($0) }) {
                passesLeft[TablePartition(table: group.table, partition: partition), default: 0] += 1
            }
        }
    }

    /// Entities in the dataset's partitions the dataset does not hold, left in place (no prune).
    private(set) var extra: [String: Int] = [:]
    /// Entities left unchanged, by table.
    private(set) var unchanged: [String: Int] = [:]

    /// Merges every group, then reads the owned partitions no group holds (all leftovers),
    /// and hands `emit` each action as it is made, then the deletes.
    mutating func run(digest: LineDigest?, emit: (MergeOutput) async throws -> Void) async throws {
        for (index, group) in desired.groups.enumerated() {
            try await pass(group: index, table: group.table, partitions: group.partitions, digest: digest, emit: emit)
            try await emit(.kindEnded)
        }
        for table in desired.tables {
            let orphans = table.partitions.filter { passesLeft[TablePartition(table: table.name, partition: ExactString($0))] == nil }
            if !orphans.isEmpty {
                for partition in orphans { passesLeft[TablePartition(table: table.name, partition: ExactString(partition))] = 1 }
                try await pass(group: nil, table: table.name, partitions: orphans, digest: digest, emit: emit)
            }
        }
        for table in desired.tables {
            for partition in table.partitions {
                let found = deletes[TablePartition(table: table.name, partition: ExactString(partition))] ?? [:]
                for rowKey in found.keys.sorted() {
                    var action = EntityAction(table: table.name, kind: nil, partitionKey: partition, rowKey: rowKey.string, change: .delete)
                    action.etag = found[rowKey] ?? nil
                    try await emit(.delete(action))
                }
            }
        }
    }

    /// One merge of a group's entities (none for `group` nil) with the observed entities of
    /// its partitions.
    private mutating func pass(
        group index: Int?, table: String, partitions: [String], digest: LineDigest?, emit: (MergeOutput) async throws -> Void
    ) async throws {
        let group = index.map { desired.groups[$0] }
        let owned = Set(partitions.map { ExactString($0) })
        var last: Set<ExactString> = []
        var first: Set<ExactString> = []
        for partition in owned {
            let key = TablePartition(table: table, partition: partition)
            passesLeft[key]! -= 1
            if passesLeft[key] == 0 { last.insert(partition) }
            if read.insert(key).inserted { first.insert(partition) }
        }
        let others = try othersKeys(group: index, table: table, owned: owned)
        let keyed = group.map { !$0.key.isEmpty && $0.partitions.count == 1 } ?? false

        // Opening a generated kind draws and sorts every RowKey it makes (tens of milliseconds
        // per 100,000 entities): on the pool's threads, while the target's first page is read,
        // so the service and the client work at once and no cooperative thread is held.
        let opening = group.map { group in Task { try await BlockingPool.run { OpenedCursor(cursor: try group.entities()) } } }
        var observed = ObservedStream(
            pages: existingTables.contains(table) ? source.pages(table: table, partitions: owned.sorted().map { $0.string }) : nil,
            table: table, owned: owned, hashed: digests ? first : [])
        let firstObserved: TableEntity?
        do { firstObserved = try await observed.next() } catch {
            opening?.cancel()
            throw error
        }
        var wanted = DesiredStream(cursor: try await opening?.value.cursor ?? EmptyCursor(), group: group, remap: remap, digest: digest)
        var pending: [TableEntity] = []
        var candidates: [TableEntity] = []
        var unchanged = 0
        var d = try await wanted.next()
        var o = firstObserved
        // Nothing read in the group's partitions: no entity to recognise, so its creates go
        // out as they come instead of waiting for the group's end (a large first apply holds
        // none of them).
        let natural = keyed && o != nil
        while d != nil || o != nil {
            let order = d == nil ? 1 : o == nil ? -1 : Self.order(d!, o!)
            if order < 0 {
                if natural { pending.append(d!) } else { try await emit(.action(Self.create(d!, group!))) }
                d = try await wanted.next()
            } else if order > 0 {
                let entity = o!
                let partition = ExactString(entity.partitionKey)
                let claimed =
                    others[partition]?.contains(ExactString(entity.rowKey)) == true
                    || recognised[TablePartition(table: table, partition: partition)]?.contains(ExactString(entity.rowKey)) == true
                if !claimed {
                    if natural { candidates.append(entity) } else if last.contains(partition) { leftover(entity, table: table) }
                }
                o = try await observed.next()
            } else {
                let changes = Self.changes(from: o!, to: d!)
                if changes.isEmpty {
                    unchanged += 1
                } else {
                    var action = EntityAction(
                        table: table, kind: group!.kind, partitionKey: d!.partitionKey, rowKey: d!.rowKey, change: .update,
                        changes: changes, entity: d, naturalKey: Self.describe(d!, fields: group!.key))
                    action.etag = o!.etag
                    try await emit(.action(action))
                }
                d = try await wanted.next()
                o = try await observed.next()
            }
        }
        for (key, value) in await observed.finish() { partitionDigests[TablePartition(table: table, partition: key)] = value }

        var groupRemap: [ExactString: String] = [:]
        if let group, natural {
            var used = [Bool](repeating: false, count: candidates.count)
            var byKey: [[UInt8]: [Int]] = [:]
            if !pending.isEmpty {
                for (i, candidate) in candidates.enumerated() {
                    if let key = Self.naturalKey(of: candidate, fields: group.key) { byKey[key, default: []].append(i) }
                }
            }
            var resolved: [EntityAction] = []
            for var entity in pending {
                // No observed entity left to recognise (an empty target): no key to make.
                guard !byKey.isEmpty, let key = Self.naturalKey(of: entity, fields: group.key), let i = byKey[key]?.first(where: { !used[$0] })
                else {
                    resolved.append(Self.create(entity, group))
                    continue
                }
                used[i] = true
                let current = candidates[i]
                let datasetRowKey = entity.rowKey
                groupRemap[ExactString(datasetRowKey)] = current.rowKey
                recognised[TablePartition(table: table, partition: ExactString(current.partitionKey)), default: []].insert(
                    ExactString(current.rowKey))
                entity.rowKey = current.rowKey
                let changes = Self.changes(from: current, to: entity)
                var action = EntityAction(
                    table: table, kind: group.kind, partitionKey: entity.partitionKey, rowKey: entity.rowKey,
                    change: changes.isEmpty ? .unchanged : .update, changes: changes,
                    entity: changes.isEmpty ? nil : entity, desiredRowKey: datasetRowKey,
                    naturalKey: Self.describe(entity, fields: group.key))
                action.etag = current.etag
                resolved.append(action)
            }
            for (i, candidate) in candidates.enumerated() where !used[i] && last.contains(ExactString(candidate.partitionKey)) {
                leftover(candidate, table: table)
            }
            try await emit(.resolved(resolved))
        }
        if unchanged > 0 { self.unchanged[table, default: 0] += unchanged }
        if let kind = group?.kind { remap[kind] = groupRemap }
    }

    /// The RowKeys other groups hold in the partitions this group shares with them: entities
    /// under those keys are theirs to match. Built only for shared partitions.
    private func othersKeys(group index: Int?, table: String, owned: Set<ExactString>) throws -> [ExactString: Set<ExactString>] {
        var keys: [ExactString: Set<ExactString>] = [:]
        for (other, group) in desired.groups.enumerated() where other != index && group.table == table {
            let shared = owned.intersection(group.partitions.map { ExactString($0) })
            guard !shared.isEmpty else { continue }
            for (partition, rowKeys) in try group.rowKeys() where shared.contains(partition) {
                keys[partition, default: []].formUnion(rowKeys)
            }
        }
        return keys
    }

    private mutating func leftover(_ entity: TableEntity, table: String) {
        if prune {
            deletes[TablePartition(table: table, partition: ExactString(entity.partitionKey)), default: [:]][ExactString(entity.rowKey)] = entity.etag
        } else {
            extra[table, default: 0] += 1
        }
    }

    /// The entities' order by PartitionKey, then RowKey, bytes.
    static func order(_ a: TableEntity, _ b: TableEntity) -> Int {
        let p = a.partitionKey.byteOrder(b.partitionKey)
        return p != 0 ? p : a.rowKey.byteOrder(b.rowKey)
    }

    private static func create(_ entity: TableEntity, _ group: EntityGroup) -> EntityAction {
        EntityAction(table: group.table, kind: group.kind, creating: entity, naturalKeyFields: group.key)
    }

    /// The natural key's bytes (each field's type, length and text), nil when a key field is
    /// missing.
    static func naturalKey(of entity: TableEntity, fields: [String]) -> [UInt8]? {
        var out: [UInt8] = []
        var text: [UInt8] = []
        for field in fields {
            guard let value = entity[field] else { return nil }
            NaturalKey.appendPiece(field: field, value: value, to: &out, text: &text)
        }
        return out
    }

    static func describe(_ entity: TableEntity, fields: [String]) -> [(String, String)] {
        fields.compactMap { field in entity[field].map { (field, $0.text) } }
    }

    /// Property-level differences, sorted by name. A double the service returned as an
    /// integer (JSON cannot tell `2.0` from `2` without an annotation) is the same value.
    static func changes(from current: TableEntity, to wanted: TableEntity) -> [PropertyChange] {
        // Most entities of a re-plan are unchanged: say so without sorting names.
        if current.properties.count == wanted.properties.count,
            wanted.properties.allSatisfy({ name, value in current.properties[name].map { same(value, $0) } ?? false })
        {
            return []
        }
        var names = Set(current.properties.exactKeys)
        names.formUnion(wanted.properties.exactKeys)
        var changes: [PropertyChange] = []
        for name in names.sorted() {
            let from = current[name.string]
            let to = wanted[name.string]
            if let from, let to, same(to, from) { continue }
            changes.append(PropertyChange(name: name.string, from: from, to: to))
        }
        return changes
    }

    static func same(_ wanted: EdmValue, _ current: EdmValue) -> Bool {
        if wanted == current { return true }
        switch (wanted, current) {
        case (.double(let d), .int32(let i)): return Double(i) == d
        case (.double(let d), .int64(let i)): return Double(i) == d
        default: return false
        }
    }
}

/// A table's partition, matched by bytes.
struct TablePartition: Hashable, Sendable {
    var table: String
    var partition: ExactString

    static func == (a: TablePartition, b: TablePartition) -> Bool { a.table.isExactly(b.table) && a.partition == b.partition }
    func hash(into hasher: inout Hasher) {
        ExactString(table).hash(into: &hasher)
        partition.hash(into: &hasher)
    }
}

/// A cursor handed from the pool thread that opened it to the merge, which alone uses it after.
private struct OpenedCursor: @unchecked Sendable {
    var cursor: any EntityCursor
}
