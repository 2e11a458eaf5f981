import AzureStorage
import Foundation
import SeedKit

/// Carries out one entity step of a migration, batch by batch, resumably and without lost
/// updates.
///
/// Entities are read in key order; the changed ones of one partition go in batches of at
/// most 100, each write conditional on the ETag read (`If-Match`). Before a batch is sent,
/// the ledger records it as pending (its keys and ETags) with the key the run is past; so a
/// run killed at any point resumes exactly: a pending batch whose entities all have other
/// ETags (or are gone) was committed — a batch is atomic — and the run goes on after it;
/// otherwise it is read again. A write refused because an entity changed since it was read
/// (412) reads the batch again and applies the step to what is there now: the step is a pure
/// function of the entity, so a concurrent update is never overwritten, and is migrated too.
struct EntityStepRun {
    let tables: TableClient
    let step: EntityStep
    let operation: Int
    var record: MigrationRecord
    let save: @Sendable (MigrationRecord) async throws -> Void
    /// How often one batch is read again after 412s before the run gives up.
    static let maxRereads = 20

    /// An entity the step cannot change: the run stops (its record `failed`).
    struct Stopped: Error {
        var message: String
    }

    private var cursor: MigrationRecord.EntityKey?
    /// An entity read and what the step makes of it.
    typealias Change = (read: QueriedEntity, outcome: EntityOutcome)
    /// How many batches may be in flight and how fast entities may be written
    /// (``MigrationPace``); nil: ``batchesInFlight`` at once, no rate cap.
    var pace: MigrationPace?
    /// Hears the entities read, the total counted beside the scan, and the changes made (the
    /// CLI shows them: a long step is not silent, and says when it will end).
    var progress: MigrationProgressMeter?
    /// Whether the run was found to have lost the migrate lock, before each batch or move sent
    /// without a checkpoint of its own (an idempotent step's, a rekey's: applied twice, they
    /// change nothing more). The checkpoints between them prove the lock and are fenced.
    var check: @Sendable () throws -> Void = {}
    /// Proves the run still holds the lock (a request): before a batch or move is written again
    /// after a 412. A run whose lock was taken over must not read again and write what it
    /// reads — the entity may hold a later migration's change or an application's update, made
    /// after the run that took over finished.
    var prove: @Sendable () async throws -> Void = {}
    /// The batch a run that stopped (or lost its lock) had recorded as pending and that was
    /// not found written when this run resumed: it may still land (a request of the other run
    /// in flight). An entity of it found later holding what the step writes, under another
    /// ETag, is counted as done, never changed again.
    private var unsettled: MigrationRecord.PendingBatch?
    /// Whether this run counts the operation's undo check as it scans (``ScanUndoCount``);
    /// at the end, the count is ``MigrationRecord/undoChecks``'.
    var countsUndoCheck = false
    private var undoCount: ScanUndoCount?

    init(
        tables: TableClient, step: EntityStep, operation: Int, record: MigrationRecord,
        save: @escaping @Sendable (MigrationRecord) async throws -> Void
    ) {
        self.tables = tables
        self.step = step
        self.operation = operation
        self.record = record
        self.save = save
    }

    mutating func run() async throws {
        let resumed = record.checkpoint.flatMap { $0.operation == operation ? $0 : nil }
        if countsUndoCheck { undoCount = ScanUndoCount(step: step, resumed: resumed?.undoCheck) }
        if let checkpoint = resumed {
            cursor = checkpoint.after
            if let pending = checkpoint.pending {
                if try await committed(pending) {
                    cursor = MigrationRecord.EntityKey(partitionKey: pending.partitionKey, rowKey: pending.rows.last!.rowKey)
                    record.counts[operation] += pending.rows.count
                    progress?.changed(record.counts[operation])
                } else {
                    unsettled = pending
                }
                record.checkpoint?.pending = nil
            }
        }
        var filter = step.filterText.map { TableFilter.written("(\($0))", comparisons: step.filterComparisons) }
        if let cursor {
            let past: TableFilter = .or(
                .compare("PartitionKey", .gt, .string(cursor.partitionKey)),
                .and(.partition(cursor.partitionKey), .compare("RowKey", .gt, .string(cursor.rowKey))))
            filter = filter.map { .and($0, past) } ?? past
        }
        // The total the scan will read, counted by a keys-only query beside it (unless the
        // apply-time check counted it already): what the percent and the ETA are of.
        let counting = progress.flatMap { meter in
            meter.hasTotal ? nil : Task { [tables, step, filter] in await Self.count(tables, step.table, filter: filter).map { meter.total($0) } }
        }
        defer { counting?.cancel() }
        // One strategy per kind of step, each one loop over the one scan.
        if case .rekey = step.change {
            try await runRekey(filter: filter)
        } else if step.change.isIdempotent {
            try await runConcurrently(filter: filter)
        } else {
            try await runRecorded(filter: filter)
        }
        if let undoCount {
            record.undoChecks[operation] = undoCount.progress.conflicts
            record.checkpoint?.undoCheck = nil
        }
    }

    /// A step that is not idempotent (applied twice, `x` becomes `xxxx`): one batch at a time,
    /// each recorded as pending in the ledger before it is sent (``flush(_:)``).
    private mutating func runRecorded(filter: TableFilter?) async throws {
        var batch: [Change] = []
        let stopped = try await Self.scan(
            tables, step, filter: filter, unsettled: unsettled.map { [$0] } ?? [], progress: progress, undoCount: undoCount
        ) { found in
            switch found {
            case .settled:
                record.counts[operation] += 1
                progress?.changed(record.counts[operation])
            case .change(let change):
                if let ready = try Self.collect(change, into: &batch) { try await flush(ready) }
            }
        }
        try await flush(batch)
        if let stopped { throw stopped }
    }

    /// A changed entity the scan found, or one of the ``unsettled`` batch found written by the
    /// run that recorded it (counted, never changed again).
    enum Found {
        case change(Change)
        case settled
    }

    /// The one scan every strategy runs: the step's entities after the cursor in key order, the
    /// ones the step selects and changes handed to `take` with what it makes of each. The first
    /// entity the step cannot change ends the scan and is returned: the strategy writes what it
    /// holds, then stops with it. A table that is not there is ``tableMissing(_:)``.
    static func scan(
        _ tables: TableClient, _ step: EntityStep, filter: TableFilter?, unsettled: [MigrationRecord.PendingBatch] = [],
        progress: MigrationProgressMeter?, undoCount: ScanUndoCount? = nil, take: (Found) async throws -> Void
    ) async throws -> Stopped? {
        do {
            var count = 0
            for try await page in tables.query(step.table, filter: filter, fullMetadata: true) {
                count += page.count
                progress?.read(count)
                // The step applied once per entity: the undo count and the write share it. The
                // whole page is counted before any of its entities is handed on.
                var outcomes: [EntityOutcome?] = []
                outcomes.reserveCapacity(page.count)
                for read in page {
                    let outcome = step.selects(read.entity) ? step.change.apply(to: read.entity) : nil
                    undoCount?.count(read.entity, applied: outcome)
                    outcomes.append(outcome)
                }
                undoCount?.pageCounted(page)
                for (read, outcome) in zip(page, outcomes) {
                    guard let outcome else { continue }
                    // Before the step is applied: applied to its own result it may change it again.
                    if writtenBefore(read, unsettled, step: step) {
                        try await take(.settled)
                        continue
                    }
                    switch outcome {
                    case .unchanged: continue
                    case .failed(let why): return Stopped(message: "table \(step.table), entity (\(shown(read.entity))): \(why)")
                    case .replaced, .deleted, .rekeyed:
                        progress?.begin(.writing)
                        try await take(.change((read, outcome)))
                    }
                }
            }
            return nil
        } catch let error as AzureStorageError where error.status == 404 && error.failedOperation == nil && error.operation == "Query Entities" {
            throw tableMissing(step)
        }
    }

    /// Adds a changed entity to `batch` (one partition, at most 100 entities) and returns the
    /// batch to send now, if any: the one before `change` when `change` is of another
    /// partition, or the batch `change` filled.
    static func collect(_ change: Change, into batch: inout [Change]) throws -> [Change]? {
        if case .rekeyed = change.outcome { throw notBatched }
        if let first = batch.first, !first.read.entity.partitionKey.isExactly(change.read.entity.partitionKey) {
            defer { batch = [change] }
            return batch
        }
        batch.append(change)
        guard batch.count == MigrationRecord.maxPending else { return nil }
        defer { batch = [] }
        return batch
    }

    /// The step's table is not there (a Query Entities 404): one line saying what to do.
    static func tableMissing(_ step: EntityStep) -> RunError {
        RunError("\(step.change.name): table \(step.table) does not exist; create it first (create-table) or name the right table")
    }

    /// Batches written in flight at once by an idempotent step.
    static let batchesInFlight = 16
    /// An idempotent step records the key it is past after this many batches.
    static let batchesPerCheckpoint = 20

    /// An idempotent step: a batch applied twice is applied once in effect, so batches go out
    /// concurrently (``batchesInFlight``) with no pending record, and the ledger records every
    /// ``batchesPerCheckpoint`` batches the key before which all are written. A run stopped
    /// anywhere resumes there; the batches written after it meet entities already changed,
    /// which the step leaves as they are.
    private mutating func runConcurrently(filter: TableFilter?) async throws {
        let tables = self.tables
        let step = self.step
        var lastKeys: [MigrationRecord.EntityKey] = []
        var done: [Int: Int] = [:]
        var contiguous = 0
        var saved = 0
        var failure: Stopped?
        try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            var inFlight = 0
            /// Takes finished batches: moves the cursor past every batch before which all are written.
            func finish(_ result: (Int, Int)) async throws {
                done[result.0] = result.1
                while let count = done.removeValue(forKey: contiguous) {
                    record.counts[operation] += count
                    progress?.changed(record.counts[operation])
                    cursor = lastKeys[contiguous]
                    contiguous += 1
                }
                if contiguous - saved >= Self.batchesPerCheckpoint {
                    record.checkpoint = MigrationRecord.Checkpoint(
                        operation: operation, after: cursor, pending: nil, undoCheck: undoCount?.recorded())
                    try await save(record)
                    saved = contiguous
                }
            }
            func send(_ batch: [Change]) async throws {
                guard !batch.isEmpty else { return }
                while inFlight >= (pace?.limit ?? Self.batchesInFlight), let result = try await group.next() {
                    inFlight -= 1
                    try await finish(result)
                }
                try check()
                if let undoCount, undoCount.needsRecording {
                    // The count over the pages read so far, recorded before a batch of them is
                    // written: a run resumed after this one counts none of them again.
                    record.checkpoint = MigrationRecord.Checkpoint(operation: operation, after: cursor, pending: nil, undoCheck: undoCount.recorded())
                    try await save(record)
                    // It records the cursor too: the periodic checkpoint counts from here (a
                    // page is ten batches, so most of those saves are not needed).
                    saved = contiguous
                }
                let index = lastKeys.count
                lastKeys.append(MigrationRecord.EntityKey(partitionKey: batch[0].read.entity.partitionKey, rowKey: batch.last!.read.entity.rowKey))
                let prove = self.prove
                let pace = self.pace
                let sent = try await pace?.admit(batch.count)
                group.addTask {
                    defer { if let sent { pace?.answered(sent) } }
                    return (index, try await Self.write(batch, to: tables, step: step, prove: prove))
                }
                inFlight += 1
            }
            var current: [Change] = []
            failure = try await Self.scan(tables, step, filter: filter, progress: progress, undoCount: undoCount) { found in
                guard case .change(let change) = found else { return }
                if let ready = try Self.collect(change, into: &current) { try await send(ready) }
            }
            try await send(current)
            while let result = try await group.next() { try await finish(result) }
        }
        record.checkpoint = MigrationRecord.Checkpoint(operation: operation, after: cursor, pending: nil, undoCheck: undoCount?.recorded())
        if let failure { throw failure }
    }

    /// Writes one batch on the ETags read; on 412 (an entity changed meanwhile) reads it again
    /// and applies the step to what is there now. Returns how many entities it changed.
    static func write(
        _ first: [Change], to tables: TableClient, step: EntityStep,
        prove: @Sendable () async throws -> Void = {}
    ) async throws -> Int {
        var batch = first
        var attempts = 0
        var settled = 0
        while !batch.isEmpty {
            do {
                try await tables.submit(operations(batch), to: step.table)
                return settled + batch.count
            } catch let error as AzureStorageError where error.status == 412 || (error.status == 404 && error.failedOperation != nil) {
                attempts += 1
                guard attempts <= maxRereads else {
                    throw RunError(
                        "table \(step.table), partition '\(Printable.escaped(batch[0].read.entity.partitionKey))': entities kept changing while they were migrated (\(attempts) reads); run apply again"
                    )
                }
                try await prove()
                // An entity a lost answer's request wrote is now in the shape the step makes,
                // under another ETag (or gone, where it deleted): counted as done, as the
                // recorded path counts it. (An identical write by someone else is counted too:
                // the step, being idempotent, cannot tell them apart, nor needs to.)
                let reads = try await current(batch.map(\.read.entity), tables: tables, table: step.table)
                var again: [Change] = []
                for (item, read) in zip(batch, reads) {
                    guard let read else {
                        if case .deleted = item.outcome { settled += 1 }
                        continue
                    }
                    if let change = try changed(read, step: step) {
                        again.append(change)
                    } else if read.etag != item.read.etag, case .unchanged = step.change.apply(to: read.entity) {
                        settled += 1
                    }
                }
                batch = again
            }
        }
        return settled
    }

    /// A batch as the ledger records it pending: each entity's RowKey, the ETag read and the
    /// digest of what the step writes ("absent" where it deletes).
    static func pending(_ batch: [Change], step: EntityStep) -> MigrationRecord.PendingBatch {
        MigrationRecord.PendingBatch(
            partitionKey: batch[0].read.entity.partitionKey,
            rows: batch.map { item in
                let written: String
                if case .replaced(let after) = item.outcome { written = step.writtenDigest(after) } else { written = "absent" }
                return (item.read.entity.rowKey, item.read.etag ?? "*", written)
            })
    }

    static func operations(_ batch: [Change]) -> [TableBatchOperation] {
        batch.map { item in
            let etag = item.read.etag ?? "*"
            switch item.outcome {
            case .replaced(let entity): return .update(entity, etag: etag)
            default: return .delete(partitionKey: item.read.entity.partitionKey, rowKey: item.read.entity.rowKey, etag: etag)
            }
        }
    }

    /// A rekey moves entities one by one (old and new may be in different partitions): never
    /// in a batch.
    static let notBatched = RunError("a rekey reached the batch writer; this is a defect of azseed")

    /// `rekey`: each selected entity whose templates give other keys is inserted under them,
    /// then the old one deleted on its ETag — several at once. Checked entity by entity to give
    /// its own keys again (``EntityChange/apply(to:)``), a rekey is idempotent: a stopped run
    /// scans again, finds the moved entities unchanged and the half-moved ones (both present)
    /// finishes.
    private mutating func runRekey(filter: TableFilter?) async throws {
        let tables = self.tables
        let step = self.step
        var moved = 0
        var failure: Stopped?
        try await withThrowingTaskGroup(of: Void.self) { group in
            var inFlight = 0
            failure = try await Self.scan(tables, step, filter: filter, progress: progress) { found in
                guard case .change(let change) = found, case .rekeyed(let new) = change.outcome else { return }
                while inFlight >= (pace?.limit ?? Self.batchesInFlight) * 4, (try await group.next()) != nil {
                    inFlight -= 1
                }
                try check()
                let prove = self.prove
                let pace = self.pace
                let sent = try await pace?.admit(1)
                group.addTask {
                    defer { if let sent { pace?.answered(sent) } }
                    try await Self.move(change.read, to: new, tables: tables, step: step, prove: prove)
                }
                inFlight += 1
                moved += 1
                progress?.changed(record.counts[operation] + moved)
            }
            try await group.waitForAll()
        }
        record.counts[operation] += moved
        progress?.changed(record.counts[operation])
        record.checkpoint = MigrationRecord.Checkpoint(operation: operation, after: nil, pending: nil)
        if let failure { throw failure }
    }

    /// Moves one entity: inserts it under its new keys (one already there with the same values
    /// is this move's, from a run that stopped), then deletes the old on the ETag read. An old
    /// entity changed meanwhile is read again and moved as it now is.
    static func move(
        _ first: QueriedEntity, to firstNew: TableEntity, tables: TableClient, step: EntityStep, prove: @Sendable () async throws -> Void = {}
    ) async throws {
        var read = first
        var new = firstNew
        for _ in 0...maxRereads {
            do {
                _ = try await tables.insert(new, into: step.table)
            } catch let error as AzureStorageError where error.status == 409 {
                let there = try await tables.get(partitionKey: new.partitionKey, rowKey: new.rowKey, from: step.table)
                guard there?.entity == new else {
                    throw Stopped(
                        message:
                            "table \(step.table), entity (\(shown(read.entity))): an entity with its new keys (\(shown(new))) already exists with other values; nothing of it was changed"
                    )
                }
            }
            do {
                try await tables.deleteEntity(
                    partitionKey: read.entity.partitionKey, rowKey: read.entity.rowKey, from: step.table, etag: read.etag ?? "*")
                return
            } catch let error as AzureStorageError where error.status == 404 {
                return  // gone: moved by an earlier run, or deleted by someone else
            } catch let error as AzureStorageError where error.status == 412 {
                // Changed since it was read: the copy made is of an old version. Read it again
                // (still holding the lock: what is there may be written after a takeover).
                try await prove()
                guard let fresh = try await tables.get(partitionKey: read.entity.partitionKey, rowKey: read.entity.rowKey, from: step.table) else {
                    return
                }
                guard step.selects(fresh.entity), case .rekeyed(let again) = step.change.apply(to: fresh.entity) else {
                    // No longer moved by the step: the copy made is not wanted.
                    try await tables.deleteEntity(partitionKey: new.partitionKey, rowKey: new.rowKey, from: step.table)
                    return
                }
                if again.partitionKey.isExactly(new.partitionKey) && again.rowKey.isExactly(new.rowKey) {
                    _ = try await tables.upsert(again, into: step.table)
                } else {
                    try await tables.deleteEntity(partitionKey: new.partitionKey, rowKey: new.rowKey, from: step.table)
                }
                read = fresh
                new = again
            }
        }
        throw RunError("table \(step.table), entity (\(shown(read.entity))): it kept changing while it was moved; run apply again")
    }

    /// Records the batch as pending, sends it, and moves past it.
    ///
    /// A batch the service applied but whose answer was lost (a dropped connection, a 500
    /// after applying) is retried by the pipeline and refused (412: its entities' ETags
    /// changed). Each batch recorded as pending here is in flight until its answer: an entity
    /// of one found holding, under another ETag, what this step wrote — or gone, where it
    /// deleted — is counted as done, never changed again (x → xx must not become xxxx).
    private mutating func flush(_ first: [Change]) async throws {
        guard let last = first.last else { return }
        var batch = first
        var attempts = 0
        var inFlight: [MigrationRecord.PendingBatch] = unsettled.map { [$0] } ?? []
        while !batch.isEmpty {
            let partition = batch[0].read.entity.partitionKey
            // An entity changed since the scan read and counted it (a concurrent writer, found
            // by a 412) may no longer come back by undo: counted with the pending batch, before
            // it is written. Only the entities read again are added (counting the first read
            // here too counted each of them twice). Rename and set if-missing always come back;
            // only a text replacement may not, and it is written here, one batch at a time.
            if let inverse = step.inverse, let undoCount, attempts > 0 {
                undoCount.add(
                    batch.filter { item in
                        guard case .replaced(let after) = item.outcome else { return false }
                        return inverse.change.apply(to: after) != .replaced(item.read.entity)
                    }.count)
            }
            let pending = Self.pending(batch, step: step)
            record.checkpoint = MigrationRecord.Checkpoint(operation: operation, after: cursor, pending: pending, undoCheck: undoCount?.recorded())
            try await save(record)
            inFlight.append(pending)
            let sent = try await pace?.admit(batch.count)
            defer { if let sent { pace?.answered(sent) } }
            do {
                try await tables.submit(Self.operations(batch), to: step.table)
                record.counts[operation] += batch.count
                progress?.changed(record.counts[operation])
                batch = []
            } catch let error as AzureStorageError where error.status == 412 || (error.status == 404 && error.failedOperation != nil) {
                // Changed (or deleted) since it was read: read the batch again, apply again.
                attempts += 1
                guard attempts <= Self.maxRereads else {
                    throw RunError(
                        "table \(step.table), partition '\(Printable.escaped(partition))': entities kept changing while they were migrated (\(attempts) reads); run apply again"
                    )
                }
                let again = try await Self.reread(batch.map(\.read.entity), tables: tables, step: step, unsettled: inFlight)
                record.counts[operation] += again.settled
                progress?.changed(record.counts[operation])
                batch = again.batch
            }
        }
        // Every entity of the batch is done: written, found written, or left as it now is.
        cursor = MigrationRecord.EntityKey(partitionKey: last.read.entity.partitionKey, rowKey: last.read.entity.rowKey)
        record.checkpoint = MigrationRecord.Checkpoint(operation: operation, after: cursor, pending: nil, undoCheck: undoCount?.recorded())
    }

    static func shown(_ entity: TableEntity) -> String {
        "PartitionKey '\(Printable.escaped(entity.partitionKey, quotes: false))', RowKey '\(Printable.escaped(entity.rowKey, quotes: false))'"
    }
}

extension EntityStepRun {
    /// How many entities `filter` selects in `table`, read as keys only; nil when the count
    /// fails or is cancelled (the run goes on without a total: the scan reports what matters).
    static func count(_ tables: TableClient, _ table: String, filter: TableFilter?) async -> Int? {
        try? await tables.count(table, filter: filter)
    }
}
