import AzureStorage
import Crypto

/// Matches desired entities with observed ones, group by group: by RowKey first, then by
/// natural key, so entities written with foreign RowKeys (the original program's random
/// GUIDs) are recognised instead of created again.
///
/// A recognised entity keeps its RowKey; the RowKey is recorded so that fields holding
/// references to it (`SpeakerKey`) in later kinds point at the RowKey it really has.
///
/// Keys are matched by their bytes (`ExactString`), as Azure matches them: an NFC and an
/// NFD RowKey are two entities.
struct EntityMatcher {
    let observed: ObservedState
    let desired: DesiredStorage
    /// Observed entities already matched, by table, partition, RowKey.
    private var consumed: [String: [ExactString: Set<ExactString>]] = [:]
    /// Desired RowKey → the RowKey it exists under, per kind, for recognised entities.
    private var remap: [String: [ExactString: String]] = [:]
    /// The desired RowKeys by table and partition, built when a partition holds entities
    /// under RowKeys the groups do not know (only then is a natural-key search needed).
    private var desiredKeys: [String: [ExactString: Set<ExactString>]] = [:]

    init(observed: ObservedState, desired: DesiredStorage) {
        self.observed = observed
        self.desired = desired
    }

    mutating func plan(_ group: EntityGroup, into plan: inout Plan, digest: inout SHA256?) throws {
        let partitions = observed.tables[group.table]?.partitions ?? [:]
        // Built at the first desired entity missing under its RowKey: a re-plan of an
        // account that already holds everything never needs it.
        var index: [[UInt8]: [ExactString]]?
        var groupRemap: [ExactString: String] = [:]
        var taken = consumed[group.table] ?? [:]
        var line: [UInt8] = []
        var unchanged = 0
        try group.forEach { wanted in
            // The whole desired state is checked while planning, before apply writes anything:
            // an entity Azure would refuse must not surface halfway through the batches.
            if let problem = StorageNames.entityProblem(wanted) {
                throw GenerationError("table \(group.table)\(group.kind.map { ", kind '\($0)'" } ?? ""): entity (\(wanted.partitionKey), \(wanted.rowKey)) \(problem); nothing was written")
            }
            if digest != nil {
                line.removeAll(keepingCapacity: true)
                EntityJSONEncoder.append(wanted, to: &line)
                line.append(UInt8(ascii: "\n"))
                digest!.update(data: line)
            }

            var entity = wanted
            for (field, target) in group.rowKeyReferences {
                if case .string(let key)? = entity[field], let actual = remap[target]?[ExactString(key)] { entity[field] = .string(actual) }
            }
            let partition = ExactString(entity.partitionKey)
            let existing = partitions[partition]
            var recognisedFrom: String?
            var current = existing?[ExactString(entity.rowKey)]
            if current == nil, index == nil { index = try naturalKeyIndex(group, partitions: partitions) }
            if current == nil, let index, !index.isEmpty, let key = Self.naturalKey(of: entity, fields: group.key),
               let candidate = index[key]?.first(where: { !(taken[partition]?.contains($0) ?? false) }) {
                current = existing?[candidate]
                recognisedFrom = entity.rowKey
                groupRemap[ExactString(entity.rowKey)] = candidate.string
                entity.rowKey = candidate.string
            }
            guard let current else {
                plan.entities.append(EntityAction(table: group.table, kind: group.kind, partitionKey: entity.partitionKey, rowKey: entity.rowKey,
                                                  change: .create, entity: entity, naturalKey: Self.describe(entity, fields: group.key)))
                return
            }
            taken[partition, default: []].insert(ExactString(current.rowKey))
            let changes = Self.changes(from: current, to: entity)
            if changes.isEmpty && recognisedFrom == nil {
                unchanged += 1
                return
            }
            plan.entities.append(EntityAction(table: group.table, kind: group.kind, partitionKey: entity.partitionKey, rowKey: entity.rowKey,
                                              change: changes.isEmpty ? .unchanged : .update, changes: changes,
                                              entity: changes.isEmpty ? nil : entity, desiredRowKey: recognisedFrom,
                                              naturalKey: Self.describe(entity, fields: group.key)))
        }
        plan.unchangedEntities[group.table, default: 0] += unchanged
        consumed[group.table] = taken
        if let kind = group.kind { remap[kind] = groupRemap }
    }

    /// Observed entities of the owned partitions that no desired entity matched: deleted
    /// with prune, counted otherwise.
    func planLeftovers(into plan: inout Plan) {
        for table in desired.tables {
            guard let existing = observed.tables[table.name] else { continue }
            var extra = 0
            for partition in table.partitions {
                let taken = consumed[table.name]?[ExactString(partition)] ?? []
                let rows = existing.partitions[ExactString(partition)] ?? [:]
                for rowKey in rows.keys.filter({ !taken.contains($0) }).sorted() {
                    if plan.header.prune {
                        plan.entityDeletes.append(EntityAction(table: table.name, kind: nil, partitionKey: partition, rowKey: rowKey.string, change: .delete))
                    } else {
                        extra += 1
                    }
                }
            }
            if extra > 0 { plan.extraEntities[table.name] = extra }
        }
    }

    /// Natural key → RowKeys of observed entities of the group's partition that no group
    /// holds under their RowKey. Empty (and free) when the group has no natural key or
    /// every observed RowKey is a desired one.
    private mutating func naturalKeyIndex(_ group: EntityGroup, partitions: [ExactString: [ExactString: TableEntity]]) throws -> [[UInt8]: [ExactString]] {
        let partition = ExactString(group.partitions.first ?? "")
        guard !group.key.isEmpty, group.partitions.count == 1, let existing = partitions[partition], !existing.isEmpty else { return [:] }
        if desiredKeys[group.table] == nil {
            var keys: [ExactString: Set<ExactString>] = [:]
            for other in desired.groups where other.table == group.table {
                for (partition, set) in try other.rowKeys() { keys[partition, default: []].formUnion(set) }
            }
            desiredKeys[group.table] = keys
        }
        let known = desiredKeys[group.table]?[partition] ?? []
        var index: [[UInt8]: [ExactString]] = [:]
        for rowKey in existing.keys.filter({ !known.contains($0) }).sorted() {
            if let key = Self.naturalKey(of: existing[rowKey]!, fields: group.key) { index[key, default: []].append(rowKey) }
        }
        return index
    }

    /// The natural key's bytes (each field's type, length and text), nil when a key field is
    /// missing.
    static func naturalKey(of entity: TableEntity, fields: [String]) -> [UInt8]? {
        var out: [UInt8] = [], text: [UInt8] = []
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
           wanted.properties.allSatisfy({ name, value in current.properties[name].map { same(value, $0) } ?? false }) {
            return []
        }
        var names = Set(current.properties.exactKeys)
        names.formUnion(wanted.properties.exactKeys)
        var changes: [PropertyChange] = []
        for name in names.sorted() {
            let from = current[name.string], to = wanted[name.string]
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
