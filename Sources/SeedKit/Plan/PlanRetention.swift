import AzureStorage

/// How much of its entity actions a plan holds. A plan printed as text lists only the first
/// creates and deletes of each kind, so a large one need not hold the rest: past
/// `wholeUpTo` creates and deletes it keeps the first `listLimit` of each table, kind and
/// change and counts the others (``Plan/countedEntities``). Such a plan is shown and
/// recorded, and `apply` writes it by planning again as it writes (flat memory), checking
/// each action against the one counted (``ActionFingerprints``).
public struct PlanRetention: Sendable, Equatable {
    /// Creates and deletes held whole before the plan holds only what it lists.
    public var wholeUpTo: Int
    /// The bytes of entity values (keys, names, texts, binaries; a number as 8) held whole
    /// before the plan holds only what it lists, however few the creates and deletes.
    public var wholeBytes: Int
    /// Creates (and deletes) held of each table and kind past `wholeUpTo`; at least 1, so
    /// every kind with one is listed as the whole plan lists it.
    public var listLimit: Int

    /// `listLimit` below 1 is taken as 1.
    public init(wholeUpTo: Int, wholeBytes: Int = .max, listLimit: Int) {
        self.wholeUpTo = wholeUpTo
        self.wholeBytes = wholeBytes
        self.listLimit = max(1, listLimit)
    }

    /// Every action: saved and JSON plans list them all.
    public static let whole = PlanRetention(wholeUpTo: .max, listLimit: .max)
    /// A plan printed as text: whole up to 20,000 creates and deletes (about 40 MB of
    /// SpeakEasy's events) or 32 MiB of their values (an attacker's review: 300 entities of
    /// 480 KB each were held whole, 285 MB for an apply), past it what ``PlanTextRenderer``
    /// lists.
    public static let text = PlanRetention(wholeUpTo: 20_000, wholeBytes: 32 << 20, listLimit: PlanTextRenderer.defaultListLimit)
}

/// Entity creates or deletes of one table, kind and change that a plan counted without
/// holding them (``PlanRetention``).
public struct CountedEntityActions: Sendable, Equatable {
    public var table: String
    /// nil for entities the dataset does not hold (deletes).
    public var kind: String?
    /// `.create` or `.delete`.
    public var change: PlanChange
    public var count: Int

    /// Counted actions of one table, kind and change.
    public init(table: String, kind: String?, change: PlanChange, count: Int) {
        self.table = table
        self.kind = kind
        self.change = change
        self.count = count
    }
}

/// One number per entity action of a plan, in the plan's order, from what the action was
/// planned on and what it writes: its change, table, keys, the ETag it read (none for a
/// create) and the entity it writes. Planning
/// the same target again gives the same numbers; another client's write between the two
/// gives another number where it wrote. 8 bytes an action, so a plan of a million creates
/// is checked in 8 MB. Within one process only (``Hasher`` is seeded per process).
public struct ActionFingerprints: Sendable, Equatable {
    /// One per action, in the plan's order.
    public private(set) var values: [Int] = []

    /// No actions.
    public init() {}

    /// Adds the next action's fingerprint.
    package mutating func append(_ action: EntityAction) { values.append(Self.of(action)) }

    /// An action's fingerprint: names, keys, the ETag and the entity it writes, by their bytes
    /// as Azure compares them. The entity counts because a kind copied from a file is read
    /// again for the second planning: a file edited between the two must not be written.
    package static func of(_ action: EntityAction) -> Int {
        var hasher = Hasher()
        hasher.combine(action.change)
        ExactString(action.table).hash(into: &hasher)
        ExactString(action.partitionKey).hash(into: &hasher)
        ExactString(action.rowKey).hash(into: &hasher)
        hasher.combine(action.etag == nil)
        if let etag = action.etag { ExactString(etag).hash(into: &hasher) }
        if let entity = action.entity {
            // Properties in no particular order: each numbered alone, the numbers summed.
            var sum: UInt64 = 0
            for (name, value) in entity.properties { sum &+= PropertyFingerprint.of(name: name, value: value) }
            hasher.combine(sum)
        }
        return hasher.finalize()
    }

    /// Not part of a plan's value: two plans of the same actions are equal whatever they read.
    public static func == (a: ActionFingerprints, b: ActionFingerprints) -> Bool { true }
}

/// What the merge makes, in order: each kind's creates, updates and natural-key matches,
/// then the kind's end, then, after every kind, the deletes.
package enum MergeOutput {
    case action(EntityAction)
    /// A kind's natural-key matches and the creates left unmatched, made at the kind's end,
    /// in the dataset's RowKey order.
    case resolved([EntityAction])
    /// Every action of the kind is made: the next kind may refer to its entities.
    case kindEnded
    case delete(EntityAction)
}

/// The plan's entity actions as the merge makes them, held as ``PlanRetention`` says.
struct PlanEntityCollector {
    let retention: PlanRetention
    var entities: [EntityAction] = []
    var deletes: [EntityAction] = []
    var counted: [CountedEntityActions] = []
    var fingerprints = ActionFingerprints()
    /// Resolved actions kept so far, before they are put among the kind's others.
    private var resolving: [EntityAction] = []
    /// Where the kind under way begins in `entities`.
    private var kindStart = 0
    /// Creates and deletes taken (held or counted).
    private var listed = 0
    /// The values' bytes of the creates and deletes held before the trim (``TableEntity/approximateBytes``).
    private var heldBytes = 0
    /// Past `wholeUpTo`: holding only the first `listLimit` of each group.
    private var trimmed = false
    private var shown: [ListGroup: Int] = [:]
    private var countedIndex: [ListGroup: Int] = [:]
    /// The group counted last (already past its `listLimit`) and its place in `counted`.
    private var lastCounted: (group: ListGroup, index: Int)?

    private struct ListGroup: Hashable {
        var change: PlanChange
        var table: ExactString
        var kind: ExactString?
    }

    init(retention: PlanRetention) { self.retention = retention }

    mutating func take(_ output: MergeOutput) {
        switch output {
        case .action(let action):
            fingerprints.append(action)
            if let kept = keep(action) { entities.append(kept) }
        case .resolved(let actions):
            for action in actions {
                fingerprints.append(action)
                if let kept = keep(action) { resolving.append(kept) }
            }
            Self.interleave(resolving, into: &entities, from: kindStart)
            resolving = []
        case .kindEnded:
            kindStart = entities.count
        case .delete(let action):
            fingerprints.append(action)
            if let kept = keep(action) { deletes.append(kept) }
        }
    }

    /// The action, unless the plan is past its budget and its group already lists enough.
    private mutating func keep(_ action: EntityAction) -> EntityAction? {
        // Updates and natural-key matches are each listed, so each is held.
        guard action.change != .update, action.desiredRowKey == nil, retention.wholeUpTo < .max else { return action }
        listed += 1
        if !trimmed {
            // Every action is held until the budget is passed; `trim` then counts what each
            // group shows from what was held.
            if retention.wholeBytes < .max, let entity = action.entity { heldBytes += entity.approximateBytes }
            guard listed > retention.wholeUpTo || heldBytes > retention.wholeBytes else { return action }
            trim()
        }
        let group = ListGroup(change: action.change, table: ExactString(action.table), kind: action.kind.map { ExactString($0) })
        if let last = lastCounted, last.group == group {
            // Past its first `listLimit`, a group's actions come one after another: counted
            // without hashing the group again.
            counted[last.index].count += 1
            return nil
        }
        if shown[group, default: 0] < retention.listLimit {
            shown[group, default: 0] += 1
            return action
        }
        count(group, action)
        return nil
    }

    private mutating func count(_ group: ListGroup, _ action: EntityAction) {
        if let i = countedIndex[group] {
            counted[i].count += 1
            lastCounted = (group, i)
        } else {
            countedIndex[group] = counted.count
            lastCounted = (group, counted.count)
            counted.append(CountedEntityActions(table: action.table, kind: action.kind, change: action.change, count: 1))
        }
    }

    /// Drops what was held past each group's first `listLimit`, counting it.
    private mutating func trim() {
        trimmed = true
        var seen: [ListGroup: Int] = [:]
        func filter(_ actions: [EntityAction], start: Int) -> (kept: [EntityAction], start: Int) {
            var kept: [EntityAction] = []
            var newStart = 0
            for (i, action) in actions.enumerated() {
                if i == start { newStart = kept.count }
                guard action.change != .update, action.desiredRowKey == nil else {
                    kept.append(action)
                    continue
                }
                let group = ListGroup(change: action.change, table: ExactString(action.table), kind: action.kind.map { ExactString($0) })
                if seen[group, default: 0] < retention.listLimit {
                    seen[group, default: 0] += 1
                    kept.append(action)
                } else {
                    count(group, action)
                }
            }
            return (kept, start >= actions.count ? kept.count : newStart)
        }
        (entities, kindStart) = filter(entities, start: kindStart)
        resolving = filter(resolving, start: resolving.count).kept
        deletes = filter(deletes, start: deletes.count).kept
        shown = seen
    }

    /// Puts the actions of entities resolved at the kind's end back among the kind's other
    /// actions (`entities[start...]`), in the dataset's RowKey order — where they would be
    /// had each been known when its turn came.
    static func interleave(_ resolved: [EntityAction], into entities: inout [EntityAction], from start: Int) {
        guard !resolved.isEmpty else { return }
        let merged = Array(entities[start...])
        entities.removeSubrange(start...)
        var i = 0
        var j = 0
        while i < merged.count || j < resolved.count {
            if j == resolved.count || (i < merged.count && datasetKey(merged[i]).byteOrder(datasetKey(resolved[j])) < 0) {
                entities.append(merged[i])
                i += 1
            } else {
                entities.append(resolved[j])
                j += 1
            }
        }
    }

    private static func datasetKey(_ action: EntityAction) -> String { action.desiredRowKey ?? action.rowKey }
}
