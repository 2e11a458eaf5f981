import AzureStorage
import Crypto

/// Matches desired entities with observed ones, kind by kind: by RowKey first, then by
/// natural key, so entities written with foreign RowKeys (the original program's random
/// GUIDs) are recognised instead of created again.
///
/// A recognised entity keeps its RowKey; the RowKey is recorded so that fields holding
/// references to it (`SpeakerKey`) in later kinds point at the RowKey it really has.
struct EntityMatcher {
    let observed: ObservedState
    let desired: DesiredState
    /// Observed entities already matched, by table, partition, RowKey.
    private var consumed: [String: [String: Set<String>]] = [:]
    /// Desired RowKey → the RowKey it exists under, per kind, for recognised entities.
    private var remap: [String: [String: String]] = [:]
    /// The dataset's RowKeys by table and partition, built when a partition holds entities
    /// under RowKeys the dataset does not know (only then is a natural-key search needed).
    private var desiredKeys: [String: [String: Set<String>]] = [:]

    init(observed: ObservedState, desired: DesiredState) {
        self.observed = observed
        self.desired = desired
    }

    mutating func planKind(_ kind: KindSpec, of table: DesiredTable, into plan: inout Plan, digest: inout SHA256) throws {
        let existing = observed.tables[table.name]?.partitions[kind.partition] ?? [:]
        let index = try naturalKeyIndex(kind, table: table, existing: existing)
        let references = kind.rowKeyReferences
        var kindRemap: [String: String] = [:]
        var taken = consumed[table.name]?[kind.partition] ?? []
        var line: [UInt8] = []
        var unchanged = 0
        try table.forEachEntity(ofKind: kind.name) { generated in
            line.removeAll(keepingCapacity: true)
            EntityJSONEncoder.append(partitionKey: generated.partitionKey, rowKey: generated.rowKey, names: generated.names,
                                     values: generated.values, to: &line)
            line.append(UInt8(ascii: "\n"))
            digest.update(data: line)

            var entity = generated.tableEntity
            for (field, target) in references {
                if case .string(let key)? = entity[field], let actual = remap[target]?[key] { entity[field] = .string(actual) }
            }
            var recognisedFrom: String?
            var current = existing[entity.rowKey]
            if current == nil, !index.isEmpty, let key = Self.naturalKey(of: entity, fields: kind.key),
               let candidate = index[key]?.first(where: { !taken.contains($0) }) {
                current = existing[candidate]
                recognisedFrom = entity.rowKey
                kindRemap[entity.rowKey] = candidate
                entity.rowKey = candidate
            }
            guard let current else {
                plan.entities.append(EntityAction(table: table.name, kind: kind.name, partitionKey: entity.partitionKey, rowKey: entity.rowKey,
                                                  change: .create, changes: [], entity: entity, desiredRowKey: nil,
                                                  naturalKey: Self.describe(entity, fields: kind.key)))
                return
            }
            taken.insert(current.rowKey)
            let changes = Self.changes(from: current, to: entity)
            if changes.isEmpty && recognisedFrom == nil {
                unchanged += 1
                return
            }
            plan.entities.append(EntityAction(table: table.name, kind: kind.name, partitionKey: entity.partitionKey, rowKey: entity.rowKey,
                                              change: changes.isEmpty ? .unchanged : .update, changes: changes,
                                              entity: changes.isEmpty ? nil : entity, desiredRowKey: recognisedFrom,
                                              naturalKey: Self.describe(entity, fields: kind.key)))
        }
        plan.unchangedEntities[table.name, default: 0] += unchanged
        consumed[table.name, default: [:]][kind.partition] = taken
        remap[kind.name] = kindRemap
    }

    /// Observed entities of the dataset's partitions that no desired entity matched: deleted
    /// with prune, counted otherwise.
    func planLeftovers(desired: DesiredState, into plan: inout Plan) {
        for table in desired.tables {
            guard let existing = observed.tables[table.name] else { continue }
            var extra = 0
            for partition in table.partitions {
                let taken = consumed[table.name]?[partition] ?? []
                let rows = existing.partitions[partition] ?? [:]
                for rowKey in rows.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) where !taken.contains(rowKey) {
                    if plan.header.prune {
                        plan.entityDeletes.append(EntityAction(table: table.name, kind: nil, partitionKey: partition, rowKey: rowKey, change: .delete,
                                                               changes: [], entity: nil, desiredRowKey: nil, naturalKey: []))
                    } else {
                        extra += 1
                    }
                }
            }
            if extra > 0 { plan.extraEntities[table.name] = extra }
        }
    }

    /// Natural key → RowKeys of observed entities of `kind`'s partition that the dataset
    /// does not hold under their RowKey. Empty (and free) when every observed RowKey is one
    /// of the dataset's.
    private mutating func naturalKeyIndex(_ kind: KindSpec, table: DesiredTable, existing: [String: TableEntity]) throws -> [[UInt8]: [String]] {
        guard !existing.isEmpty, kind.key.allSatisfy(kind.storedNames.contains) else { return [:] }
        if desiredKeys[table.name] == nil { desiredKeys[table.name] = try table.rowKeysByPartition() }
        let known = desiredKeys[table.name]?[kind.partition] ?? []
        var index: [[UInt8]: [String]] = [:]
        for rowKey in existing.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) where !known.contains(rowKey) {
            if let key = Self.naturalKey(of: existing[rowKey]!, fields: kind.key) { index[key, default: []].append(rowKey) }
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
        var names = Set(current.properties.keys)
        names.formUnion(wanted.properties.keys)
        var changes: [PropertyChange] = []
        for name in names.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let from = current[name], to = wanted[name]
            if let from, let to, same(to, from) { continue }
            changes.append(PropertyChange(name: name, from: from, to: to))
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
