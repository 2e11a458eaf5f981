import AzureStorage
import SeedKit

/// What `migrate plan` would do, or `migrate apply` did, migration by migration.
public struct MigrationReport: Sendable {
    public var version: String
    public var description: String
    /// `pending`, `running` (resumed), `applied`, or a ``MigrationStatus/State`` for the rest.
    public var state: String
    public var operations: [OperationReport]
    /// In a plan: the first operation `migrate undo` could not put back (`remove-property on
    /// events`), nil when every one can.
    public var undoBlocker: String? = nil
    /// In a result: the retries its requests needed, and the seconds spent waiting before them
    /// and before requests to throttled partitions (Azure's 503 ServerBusy and 500
    /// OperationTimedOut ask clients to back off).
    public var retries = 0
    public var backoffSeconds = 0.0
}

/// One operation's count of changes, with a few of them shown field by field.
public struct OperationReport: Sendable {
    /// `rename-property`, `create-table`…
    public var op: String
    /// The table, or for a blob operation (``isBlobOperation``) the container.
    public var table: String
    public var isBlobOperation = false
    /// Entities it changes (replaced or deleted), or for a table operation 1 when it creates
    /// or deletes the table.
    public var changes: Int
    /// Of those, entities deleted.
    public var deleted: Int
    /// Entities it cannot change (plan: `apply` would stop at the first).
    public var failures: Int
    /// Entities it leaves as they are because their value cannot be converted
    /// (`on-failure: skip`; plan only).
    public var skipped = 0
    /// Why the first of those cannot be changed.
    public var firstFailure: String?
    /// Why a `where:` selects no entity, when it selects none (plan only).
    public var warning: String?
    /// A few changes, field by field.
    public var samples: [EntityDiff]
    /// An operation an interrupted run already finished.
    public var done: Bool

    init(op: String, table: String) {
        self.op = op
        self.table = table
        changes = 0
        deleted = 0
        failures = 0
        samples = []
        done = false
    }

    /// The most samples kept per operation.
    static let maxSamples = 3
}

/// One entity's change, field by field: `- Name: String 'a'`, `+ Name: …`, `~ Name: 'a' -> 'b'`.
public struct EntityDiff: Sendable {
    public var partitionKey: String
    public var rowKey: String
    public var lines: [String]

    /// A blob step's change: `partitionKey` empty, `rowKey` the blob's name, one line.
    init(blob: String, line: String) {
        partitionKey = ""
        rowKey = blob
        lines = [line]
    }

    init(before: TableEntity, outcome: EntityOutcome) {
        partitionKey = before.partitionKey
        rowKey = before.rowKey
        if case .rekeyed(let moved) = outcome {
            lines = [
                Printable.escaped(
                    "~ keys (\(before.partitionKey), \(before.rowKey)) -> (\(moved.partitionKey), \(moved.rowKey))", quotes: false)
            ]
            return
        }
        guard case .replaced(let after) = outcome else {
            lines = ["- the entity"]
            return
        }
        var lines: [String] = []
        let names = Set(before.properties.exactKeys).union(after.properties.exactKeys).map(\.string).sorted {
            $0.utf8.lexicographicallyPrecedes($1.utf8)
        }
        for name in names {
            switch (before[name], after[name]) {
            case (let old?, nil): lines.append("- \(name): \(Self.shown(old))")
            case (nil, let new?): lines.append("+ \(name): \(Self.shown(new))")
            case (let old?, let new?) where old != new:
                // Long texts are shown from a little before where they differ, both from the
                // same place: cut at the same length alone, `….jp…` -> `….jpg` hid the change.
                let start = Self.windowStart(old.text, new.text)
                lines.append("~ \(name): \(Self.shown(old, from: start)) -> \(Self.shown(new, from: start))")
            default: break
            }
        }
        self.lines = lines.map { Printable.escaped($0, quotes: false) }
    }

    /// A value as the diff shows it: its type and its text from character `start` (an
    /// ellipsis for what is left out before), cut at 60 characters.
    static func shown(_ value: EdmValue, from start: Int = 0) -> String {
        let text = value.text
        let rest = text.dropFirst(start)
        let cut = (start > 0 ? "…" : "") + (rest.count > 60 ? String(rest.prefix(60)) + "…" : String(rest))
        return "\(value.type.shortName) '\(cut)'"
    }

    /// Where to start showing two texts that differ: 0 when both fit in 60 characters, else
    /// 20 characters before the first that differs.
    static func windowStart(_ a: String, _ b: String) -> Int {
        guard a.count > 60 || b.count > 60 else { return 0 }
        var common = 0
        for (x, y) in zip(a, b) {
            guard x == y else { break }
            common += 1
        }
        return max(0, common - 20)
    }
}
