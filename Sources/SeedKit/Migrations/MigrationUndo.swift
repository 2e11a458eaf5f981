import AzureStorage

/// What `migrate undo` can put back exactly.
///
/// An operation is invertible when, from what it made, the value it replaced can be computed
/// again: `rename-property` (the property renamed back), `set-property … if-missing: true`
/// (the property removed), `replace-in-property` (the replacement replaced back), `move-blobs`
/// (moved back) and `create-table` (deleted when the run created it). The undo of an entity
/// step puts an entity back only when the step, applied to what it puts back, gives exactly
/// the entity there now (``EntityChange/undo(_:)``): an entity the step did not make is left
/// alone. Whether every entity the step changed comes back, and nothing else moves, is checked
/// when the migration is applied (``MigrationRecord`` keeps the count of entities undo could
/// not tell apart); `migrate undo` refuses when that count is not zero.
extension EntityChange {
    /// Whether `migrate undo` can put back what this change did.
    public var isInvertible: Bool {
        switch self {
        case .renameProperty, .replaceInProperty, .splitProperty, .joinProperties: true
        case .setProperty(_, _, let ifMissing), .compute(_, _, _, let ifMissing): ifMissing
        case .mapValues(_, let map): map.isInjective
        case .custom(let change): change.inverse != nil
        default: false
        }
    }

    /// The entity this change may have made `entity` from: the renamed property named back,
    /// the set property removed, the replacement replaced back. Nil when `entity` is not of
    /// the shape the change makes. ``EntityChange/apply(to:)`` of `.undo` checks the candidate.
    func undoCandidate(_ entity: TableEntity) -> TableEntity? {
        var before = entity
        switch self {
        case .renameProperty(let from, let to):
            guard let value = entity[to], entity[from] == nil else { return nil }
            before[to] = nil
            before[from] = value
        case .setProperty(let name, _, true), .compute(let name, _, _, true):
            guard entity[name] != nil else { return nil }
            before[name] = nil
        case .replaceInProperty(let name, let find, let replace):
            guard case .string(let text)? = entity[name] else { return nil }
            let back = Retype.replacingBytes(of: replace, with: find, in: text)
            guard !back.utf8.elementsEqual(text.utf8) else { return nil }
            before[name] = .string(back)
        case .custom(let change):
            guard let inverse = change.inverse, let back = inverse(entity), back.partitionKey.isExactly(entity.partitionKey),
                back.rowKey.isExactly(entity.rowKey)
            else { return nil }
            return back
        case .mapValues(let name, let map):
            guard let value = entity[name], let from = map.from(value.text), let typed = EdmValue.parse(from, as: value.type) else { return nil }
            before[name] = typed
        case .splitProperty(let name, let separator, let into):
            guard entity[name] == nil else { return nil }
            var parts: [String] = []
            for property in into {
                guard case .string(let part)? = entity[property] else { return nil }
                parts.append(part)
                before[property] = nil
            }
            before[name] = .string(parts.joined(separator: separator))
        case .joinProperties(let names, let separator, let into):
            guard case .string(let joined)? = entity[into], !names.contains(where: { entity[$0] != nil }) else { return nil }
            let parts = Retype.splitBytes(joined, separator: separator, maxParts: names.count)
            guard parts.count == names.count else { return nil }
            before[into] = nil
            for (name, part) in zip(names, parts) { before[name] = .string(part) }
        default: return nil
        }
        return before
    }
}

extension EntityStep {
    /// The step `migrate undo` runs for this one: every entity of the table read (the `where:`
    /// is checked on the entity put back, not on the one read), nil when the change is not
    /// invertible.
    public var inverse: EntityStep? {
        guard change.isInvertible else { return nil }
        return EntityStep(table: table, filterText: nil, filter: nil, change: .undo(self), shard: shard)
    }

    /// Whether `migrate undo` could not tell `entity`, as it is before the step runs, from one
    /// the step makes: the step changes it into something undo would not put back as it was,
    /// or leaves it while it already looks like what the step makes (undo would change it).
    /// Counted over the table before the step's first write.
    public func undoConflicts(_ entity: TableEntity) -> Bool {
        undoConflicts(entity, applied: selects(entity) ? change.apply(to: entity) : nil)
    }

    /// ``undoConflicts(_:)`` given what the step does to `entity` (`applied`: the change's
    /// outcome when the step selects it, nil when it does not), so a scan that applies the
    /// step anyway does not apply it twice.
    public func undoConflicts(_ entity: TableEntity, applied: EntityOutcome?) -> Bool {
        guard let inverse else { return true }
        if case .replaced(let after)? = applied {
            return inverse.change.apply(to: after) != .replaced(entity)
        }
        if case .replaced = inverse.change.apply(to: entity) { return true }
        return false
    }
}

extension MigrationOperation {
    /// Whether `migrate undo` can put back what this operation did.
    public var isInvertible: Bool {
        switch self {
        case .createTable: true
        case .entities(let step): step.change.isInvertible
        case .blobs(let step): if case .move = step.change { true } else { false }
        case .copyTable, .deleteTable: false
        }
    }

    /// The operation that puts back what this one did, given what it recorded it changed
    /// (`applied`): nil when there is nothing to put back (a create-table of a table that was
    /// there). Only for an invertible operation.
    func inverse(applied: Int) -> MigrationOperation? {
        switch self {
        case .createTable(let table): return applied > 0 ? .deleteTable(table) : nil
        case .entities(let step): return step.inverse.map(MigrationOperation.entities)
        case .blobs(let step):
            guard case .move(let toContainer, let toPrefix) = step.change else { return nil }
            return .blobs(BlobStep(container: toContainer, prefix: toPrefix, change: .move(toContainer: step.container, toPrefix: step.prefix)))
        case .copyTable, .deleteTable: return nil
        }
    }
}

extension Migration {
    /// The first operation `migrate undo` cannot put back (its index and itself); nil when
    /// every one can.
    public var firstNotInvertible: (index: Int, operation: MigrationOperation)? {
        operations.enumerated().first { !$0.element.isInvertible }.map { ($0.offset, $0.element) }
    }

    /// The migration that undoes this one: the inverse of each operation, last first, given
    /// the counts each recorded when applied. Same version, description, file and checksum. Only for a
    /// migration whose every operation is invertible.
    public func undo(appliedCounts: [Int]) -> Migration {
        var undo = self
        undo.operations = operations.enumerated().reversed().compactMap { i, operation in
            operation.inverse(applied: appliedCounts.indices.contains(i) ? appliedCounts[i] : 1)
        }
        undo.sources = []  // its operations are not the file's
        return undo
    }
}

extension Migration {
    /// The part of this migration a sharded run (`--shard I/N`) does: each entity step the
    /// shard's partitions, each blob step the shard's blobs. Table operations stay whole
    /// (create-table is idempotent; copy-table is sharded by its runner).
    public func sharded(_ shard: Shard?) -> Migration {
        guard let shard, shard.count > 1 else { return self }
        var copy = self
        copy.operations = operations.map { operation in
            switch operation {
            case .entities(var step):
                step.shard = shard
                return .entities(step)
            case .blobs(var step):
                step.shard = shard
                return .blobs(step)
            default: return operation
            }
        }
        return copy
    }

    /// The first operation a sharded run cannot do in parts: delete-table (one shard would delete
    /// the table while another still works in it).
    public var firstNotShardable: (index: Int, operation: MigrationOperation)? {
        operations.enumerated().first {
            if case .deleteTable = $0.element { return true }
            return false
        }.map { ($0.offset, $0.element) }
    }
}
