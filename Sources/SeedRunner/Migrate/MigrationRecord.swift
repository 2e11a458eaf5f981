import AzureStorage
import Foundation
import SeedKit

/// What the target's ledger keeps about one migration: its file's checksum, its state, who ran
/// it and when, what each operation changed, and — while it runs — where it is, so an
/// interrupted run resumes there.
///
/// One entity of the ledger's table (``ReservedNames/ledgerTable``): PartitionKey `migration`,
/// RowKey the canonical version (`1.0` is `1`), `Schema` the layout's version.
public struct MigrationRecord: Sendable, Equatable {
    public static let schema: Int32 = 1
    public static let partition = "migration"
    /// The partition of the shards' own records while a migration is applied in shards
    /// (`--shard I/N`), RowKey `<version>@<I>of<N>`; the migration's record (in ``partition``)
    /// is written when every shard has finished.
    public static let shardPartition = "migration-shard"
    /// The most entities a batch holds, and so a pending batch.
    static let maxPending = 100
    /// The largest count a record may hold.
    static let maxCount = 1 << 53

    public enum State: String, Sendable, CaseIterable {
        /// Started and not finished: interrupted, or running now elsewhere.
        case running
        case applied
        /// Stopped by an entity an operation could not change; `repair` clears it.
        case failed
        /// Not run: `baseline` counts the account as migrated up to this version.
        case baseline
        /// `migrate undo` started and did not finish; running it again resumes it.
        case undoing
        /// Put back by `migrate undo`: pending again.
        case undone
    }

    /// Where a run is: the operation, the last entity key it is past, and the batch it was
    /// writing when it stopped (each entity with the ETag it had when read).
    public struct Checkpoint: Sendable, Equatable {
        public var operation: Int
        public var after: EntityKey?
        public var pending: PendingBatch?
        /// While the operation's undo check is counted by its own scan (``UndoCheck/countedByScan(_:)``):
        /// what the scan has counted so far. Every batch written lies at or before its key.
        public var undoCheck: UndoCheckProgress? = nil
    }

    /// The count of what undo could not tell apart, made by an operation's scan as it reads:
    /// over the entities up to `scanned` (in key order; nil: none yet), `conflicts` of them. The
    /// run records it before it writes any batch past `scanned`, so a run resumed there counts
    /// only entities no batch of it has written.
    public struct UndoCheckProgress: Sendable, Equatable {
        public var scanned: EntityKey?
        public var conflicts: Int
    }

    public struct EntityKey: Sendable, Equatable {
        public var partitionKey: String
        public var rowKey: String
    }

    /// Each entity of the batch with the ETag read and a digest of the value the step writes
    /// (``EntityStep/writtenDigest(_:)``).
    public struct PendingBatch: Sendable, Equatable {
        public var partitionKey: String
        public var rows: [(rowKey: String, etag: String, written: String)]

        public static func == (a: PendingBatch, b: PendingBatch) -> Bool {
            a.partitionKey.isExactly(b.partitionKey)
                && a.rows.count == b.rows.count
                && zip(a.rows, b.rows).allSatisfy { $0.rowKey.isExactly($1.rowKey) && $0.etag == $1.etag && $0.written == $1.written }
        }
    }

    public var version: String
    public var description: String
    public var script: String
    public var checksum: String
    public var state: State
    public var startedAt: EdmDateTime
    public var endedAt: EdmDateTime?
    /// `azseed <version>` and the host that ran it.
    public var tool: String
    public var host: String
    /// Entities (or tables) each operation changed, in order.
    public var counts: [Int]
    public var checkpoint: Checkpoint?
    /// Why a failed run stopped.
    public var error: String?
    /// Per operation, the entities (or blobs) `migrate undo` could not tell from the ones the
    /// operation changed, counted before its first write; nil for one not checked. Empty when
    /// the migration holds an operation that cannot be undone.
    public var undoChecks: [Int?] = []
    /// While undoing and once undone, the counts the migration recorded when applied (``counts``
    /// then holds the undo's own).
    public var appliedCounts: [Int]?
    /// The shard whose part this record keeps (a shard's record), nil for the migration's.
    public var shard: Shard?
    /// The ETag the ledger gave the record when it was read or last written by this process:
    /// a run writes its record only on it (``RecordFence``). Not part of the record's value.
    public internal(set) var etag: String?

    public static func == (a: MigrationRecord, b: MigrationRecord) -> Bool {
        a.version == b.version && a.description == b.description && a.script == b.script && a.checksum == b.checksum && a.state == b.state
            && a.startedAt == b.startedAt && a.endedAt == b.endedAt && a.tool == b.tool && a.host == b.host && a.counts == b.counts
            && a.checkpoint == b.checkpoint && a.error == b.error && a.undoChecks == b.undoChecks && a.appliedCounts == b.appliedCounts
            && a.shard == b.shard
    }

    /// The RowKey of `version`'s record for `shard`.
    static func shardRowKey(_ version: String, _ shard: Shard) -> String { "\(version)@\(shard.index)of\(shard.count)" }

    /// The record as the ledger's entity.
    public var entity: TableEntity {
        var properties: EntityProperties = [
            "Schema": .int32(Self.schema),
            "Version": .string(version),
            "Description": .string(description),
            "Script": .string(script),
            "Checksum": .string(checksum),
            "State": .string(state.rawValue),
            "StartedAt": .dateTime(startedAt),
            "Tool": .string(tool),
            "Host": .string(host),
            "Counts": .string(counts.map(String.init).joined(separator: ",")),
        ]
        if let endedAt { properties["EndedAt"] = .dateTime(endedAt) }
        if !undoChecks.isEmpty { properties["UndoChecks"] = .string(undoChecks.map { $0.map(String.init) ?? "-" }.joined(separator: ",")) }
        if let appliedCounts { properties["AppliedCounts"] = .string(appliedCounts.map(String.init).joined(separator: ",")) }
        if let error { properties["Error"] = .string(String(error.prefix(4000))) }
        if let checkpoint {
            properties["Operation"] = .int32(Int32(checkpoint.operation))
            if let after = checkpoint.after {
                properties["AfterPartitionKey"] = .string(after.partitionKey)
                properties["AfterRowKey"] = .string(after.rowKey)
            }
            if let pending = checkpoint.pending {
                properties["PendingPartitionKey"] = .string(pending.partitionKey)
                properties["PendingCount"] = .int32(Int32(pending.rows.count))
                for (i, row) in pending.rows.enumerated() {
                    properties["PendingRowKey\(i)"] = .string(row.rowKey)
                    // One property for both: an entity holds at most 252.
                    properties["PendingCheck\(i)"] = .string(row.written + " " + row.etag)
                }
            }
            if let undoCheck = checkpoint.undoCheck {
                properties["UndoCheckConflicts"] = .int64(Int64(undoCheck.conflicts))
                if let scanned = undoCheck.scanned {
                    properties["UndoCheckPartitionKey"] = .string(scanned.partitionKey)
                    properties["UndoCheckRowKey"] = .string(scanned.rowKey)
                }
            }
        }
        if let shard {
            properties["ShardIndex"] = .int32(Int32(shard.index))
            properties["ShardCount"] = .int32(Int32(shard.count))
            return TableEntity(partitionKey: Self.shardPartition, rowKey: Self.shardRowKey(version, shard), properties: properties)
        }
        return TableEntity(partitionKey: Self.partition, rowKey: version, properties: properties)
    }

    /// Reads a ledger entity; anything not written by this layout is ``MigrationRecordDamaged``.
    init(_ entity: TableEntity) throws(MigrationRecordDamaged) {
        func damaged(_ problem: String) -> MigrationRecordDamaged {
            MigrationRecordDamaged(rowKey: Printable.escaped(entity.rowKey, quotes: false), problem: problem)
        }
        func string(_ name: String, max: Int = 1024) throws(MigrationRecordDamaged) -> String {
            guard case .string(let value)? = entity[name] else { throw damaged("\(name) is missing or not a String") }
            guard value.utf8.count <= max else { throw damaged("\(name) is longer than \(max) bytes") }
            return value
        }
        func optionalString(_ name: String) throws(MigrationRecordDamaged) -> String? { entity[name] == nil ? nil : try string(name, max: 16 << 10) }
        func int(_ name: String, in range: ClosedRange<Int32>) throws(MigrationRecordDamaged) -> Int32 {
            guard case .int32(let value)? = entity[name], range.contains(value) else {
                throw damaged("\(name) is missing or not an Int32 in \(range)")
            }
            return value
        }
        func date(_ name: String) throws(MigrationRecordDamaged) -> EdmDateTime {
            guard case .dateTime(let value)? = entity[name] else { throw damaged("\(name) is missing or not a DateTime") }
            return value
        }
        guard case .int32(let schema)? = entity["Schema"] else { throw damaged("Schema is missing or not an Int32") }
        guard schema == Self.schema else {
            throw damaged("Schema \(schema) is not \(Self.schema), the layout this azseed reads; use the azseed that wrote it")
        }
        version = try string("Version")
        var shard: Shard?
        if entity.partitionKey.isExactly(Self.shardPartition) {
            let index = Int(try int("ShardIndex", in: 0...99_999))
            guard let parsed = Shard(index: index, count: Int(try int("ShardCount", in: 2...100_000))) else {
                throw damaged("ShardIndex is not below ShardCount")
            }
            shard = parsed
        }
        self.shard = shard
        let version = self.version
        let rowKey = shard.map { Self.shardRowKey(version, $0) } ?? version
        guard let parsed = MigrationVersion(version), parsed.canonical == version, rowKey.isExactly(entity.rowKey)
        else {
            throw damaged("Version is not the canonical version its RowKey names")
        }
        description = try string("Description")
        script = try string("Script")
        checksum = try string("Checksum", max: 64)
        guard let state = State(rawValue: try string("State")) else {
            throw damaged("State is not one of \(State.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.state = state
        startedAt = try date("StartedAt")
        endedAt = entity["EndedAt"] == nil ? nil : try date("EndedAt")
        tool = try string("Tool")
        host = try string("Host")
        func counts(_ name: String, unchecked: Bool = false) throws(MigrationRecordDamaged) -> [Int?] {
            let text = try string(name, max: 16 << 10)
            var counts: [Int?] = []
            for part in text.split(separator: ",", omittingEmptySubsequences: false) where !text.isEmpty {
                if unchecked && part == "-" {
                    counts.append(nil)
                    continue
                }
                // At most 2^53 each (more entities than an account holds), so sums never overflow.
                guard let n = Int(part), n >= 0, n <= Self.maxCount else { throw damaged("\(name) is not a list of counts (each 0 to 2^53)") }
                counts.append(n)
            }
            guard counts.count <= MigrationSet.maxOperations else {
                throw damaged("\(name) lists more than \(MigrationSet.maxOperations) operations")
            }
            return counts
        }
        self.counts = try counts("Counts").map { $0! }
        undoChecks = entity["UndoChecks"] == nil ? [] : try counts("UndoChecks", unchecked: true)
        appliedCounts = entity["AppliedCounts"] == nil ? nil : try counts("AppliedCounts").map { $0! }
        error = try optionalString("Error")
        if entity["Operation"] != nil {
            let operation = Int(try int("Operation", in: 0...Int32(MigrationSet.maxOperations)))
            var after: EntityKey?
            if entity["AfterPartitionKey"] != nil {
                after = EntityKey(partitionKey: try string("AfterPartitionKey"), rowKey: try string("AfterRowKey"))
            }
            var pending: PendingBatch?
            if entity["PendingPartitionKey"] != nil {
                let count = Int(try int("PendingCount", in: 1...Int32(Self.maxPending)))
                var rows: [(String, String, String)] = []
                for i in 0..<count {
                    let check = try string("PendingCheck\(i)", max: 300)
                    guard let space = check.firstIndex(of: " ") else { throw damaged("PendingCheck\(i) is not a digest and an ETag") }
                    rows.append((try string("PendingRowKey\(i)"), String(check[check.index(after: space)...]), String(check[..<space])))
                }
                pending = PendingBatch(partitionKey: try string("PendingPartitionKey"), rows: rows)
            }
            var undoCheck: UndoCheckProgress?
            let keyed = (entity["UndoCheckPartitionKey"] != nil, entity["UndoCheckRowKey"] != nil)
            if keyed.0 != keyed.1 || (keyed.0 && entity["UndoCheckConflicts"] == nil) {
                throw damaged("UndoCheckConflicts, UndoCheckPartitionKey and UndoCheckRowKey are not all there, or the count alone")
            }
            if entity["UndoCheckConflicts"] != nil {
                guard case .int64(let conflicts)? = entity["UndoCheckConflicts"], conflicts >= 0, conflicts <= Self.maxCount else {
                    throw damaged("UndoCheckConflicts is not an Int64 count (0 to 2^53)")
                }
                var scanned: EntityKey?
                if entity["UndoCheckPartitionKey"] != nil {
                    scanned = EntityKey(partitionKey: try string("UndoCheckPartitionKey"), rowKey: try string("UndoCheckRowKey"))
                }
                undoCheck = UndoCheckProgress(scanned: scanned, conflicts: Int(conflicts))
            }
            checkpoint = Checkpoint(operation: operation, after: after, pending: pending, undoCheck: undoCheck)
        }
    }

    init(
        version: String, description: String, script: String, checksum: String, state: State, startedAt: EdmDateTime, tool: String, host: String
    ) {
        self.version = version
        self.description = description
        self.script = script
        self.checksum = checksum
        self.state = state
        self.startedAt = startedAt
        self.tool = tool
        self.host = host
        counts = []
    }
}

/// A migration record that is not one (edited by hand, or by someone who may write the
/// target's tables): refused, never misread.
public struct MigrationRecordDamaged: PersonFacingError, Sendable {
    public var rowKey: String
    public var problem: String

    public var phrase: Phrase {
        "the ledger record of migration '\(rowKey)' in table \(ReservedNames.ledgerTable) is damaged (\(problem)); fix or delete that entity (PartitionKey '\(MigrationRecord.partition)')"
    }
}
