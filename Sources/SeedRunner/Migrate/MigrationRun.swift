import AzureStorage
import Foundation
import SeedKit

/// One migration applied: its record written before its first change, each operation in
/// turn from the checkpoint, then `applied`. An entity an operation cannot change (or a write
/// the service refuses for good) leaves the record `failed`, its checkpoint kept.
struct MigrationRun {
    let tables: TableClient
    let blobs: BlobClient
    let ledger: Ledger
    let tool: String
    let host: String
    let clock: @Sendable () -> EdmDateTime
    let observer: any RunObserver
    /// Called before each checkpoint is recorded (``Migrator/beforeCheckpoint``).
    var beforeCheckpoint: (@Sendable () async throws -> Void)? = nil
    /// The shard whose part this run applies (`--shard I/N`): its record is the shard's own.
    var shard: Shard? = nil
    /// Proves the run still holds the migrate lock (``MigrationLock/prove()``): before each
    /// ledger write and each change that is not idempotent.
    var prove: @Sendable () async throws -> Void = {}
    /// Whether the lock was found lost (``MigrationLock/check()``, no request): before each
    /// idempotent batch, which the next checkpoint's ``prove`` and the ledger's fence cover.
    var check: @Sendable () throws -> Void = {}
    /// How fast its entity steps write (``MigrationPace``), shared by the migrations of a run.
    var pace: MigrationPace? = nil
    /// Before each operation: waits while `migrate control` pauses the run, throws on its cancel.
    var gate: @Sendable () async throws -> Void = {}

    /// Writes the run's record on its fence, after proving the lock is still held.
    private func save(_ record: MigrationRecord, _ fence: RecordFence) async throws {
        try await prove()
        try await ledger.write(record, fence: fence)
    }

    func apply(_ entry: MigrationStatus.Entry) async throws -> MigrationReport {
        // Only runnable entries come here, and a runnable entry has its file (MigrationStatus).
        guard let migration = entry.migration else { throw RunError("migration \(entry.version) has no file to apply") }
        // The record as read with the status: the first write below is on its ETag, so a run
        // that took the lock over since makes this one stop here.
        let fence = RecordFence(entry.record?.etag)
        var record: MigrationRecord
        if let existing = entry.record, existing.state == .running {
            record = existing
        } else {
            record = MigrationRecord(
                version: migration.version.canonical, description: migration.description, script: migration.script, checksum: migration.checksum,
                state: .running, startedAt: clock(), tool: tool, host: host)
            record.shard = shard
            record.checkpoint = MigrationRecord.Checkpoint(operation: 0, after: nil, pending: nil)
        }
        if record.counts.count != migration.operations.count {
            record.counts =
                Array(record.counts.prefix(migration.operations.count))
                + Array(repeating: 0, count: max(0, migration.operations.count - record.counts.count))
        }
        // Only a migration undo can put back whole is checked for it: the others pay nothing.
        let checked = migration.firstNotInvertible == nil
        if checked && record.undoChecks.count != migration.operations.count {
            record.undoChecks = Array(repeating: nil, count: migration.operations.count)
        }
        let resumedAt = entry.record?.state == .running ? (record.checkpoint?.operation ?? 0) + 1 : nil
        try await gate()
        observer.event(.migrationStarted(Self.event(migration, undoing: false, resumedAt: resumedAt)))
        try await save(record, fence)
        let report = try await run(migration, &record, fence, undoing: false)
        record.state = .applied
        record.endedAt = clock()
        record.checkpoint = nil
        try await save(record, fence)
        return report
    }

    /// Puts back what an applied migration did (``Migration/undo(appliedCounts:)``): the record
    /// turns `undoing` before the first change, keeps the counts it was applied with, and ends
    /// `undone`; a stopped undo resumes at its checkpoint.
    func undo(_ entry: MigrationStatus.Entry) async throws -> MigrationReport {
        // Only applied or undoing entries come here: they hold their file and their record.
        guard let (migration, recorded) = entry.fileAndRecord else { throw RunError("migration \(entry.version) has no file or no record to undo") }
        var record = recorded
        let fence = RecordFence(record.etag)
        try await gate()
        observer.event(
            .migrationStarted(
                Self.event(migration, undoing: true, resumedAt: record.state == .undoing ? (record.checkpoint?.operation ?? 0) + 1 : nil)))
        let undo = migration.undo(appliedCounts: record.appliedCounts ?? record.counts)
        if record.state == .undoing,
            record.counts.count != undo.operations.count || (record.appliedCounts.map { $0.count != migration.operations.count } ?? true)
        {
            throw MigrationRecordDamaged(
                rowKey: record.version,
                problem: "it is being undone, but Counts or AppliedCounts do not match the \(undo.operations.count) steps of its undo")
        }
        if record.state != .undoing {
            try await UndoCheck(tables: tables, blobs: blobs).beforeUndo(undo, version: migration.version.text)
            record.appliedCounts = record.counts
            record.counts = Array(repeating: 0, count: undo.operations.count)
            record.state = .undoing
            record.startedAt = clock()
            record.endedAt = nil
            record.error = nil
            record.tool = tool
            record.host = host
            record.checkpoint = MigrationRecord.Checkpoint(operation: 0, after: nil, pending: nil)
        }
        try await save(record, fence)
        var report = try await run(undo, &record, fence, undoing: true)
        report.state = "undone"
        record.state = .undone
        record.endedAt = clock()
        record.checkpoint = nil
        try await save(record, fence)
        return report
    }

    /// Runs `migration`'s operations from the record's checkpoint, recording each as it ends.
    private func run(_ migration: Migration, _ record: inout MigrationRecord, _ fence: RecordFence, undoing: Bool) async throws -> MigrationReport {
        let start = record.checkpoint?.operation ?? 0
        guard record.counts.count == migration.operations.count, start <= migration.operations.count else {
            throw MigrationRecordDamaged(
                rowKey: record.version,
                problem:
                    "its checkpoint or Counts do not match the \(migration.operations.count) operation(s) \(undoing ? "of its undo" : "of its file")")
        }
        let what = undoing ? "the undo of migration \(migration.version.text), step" : "migration \(migration.version.text), operation"
        var report = MigrationReport(version: migration.version.text, description: migration.description, state: "applied", operations: [])
        let activity = tables.configuration.activity
        let (retries, backoff) = (activity.snapshot.retries, activity.backoffSeconds)
        for (i, operation) in migration.operations.enumerated() {
            var done = OperationReport(op: operation.name, table: operation.table)
            done.isBlobOperation = operation.isBlobOperation
            if i < start {
                done.changes = record.counts[i]
                done.done = true
                report.operations.append(done)
                continue
            }
            let observer = self.observer
            let meter = MigrationProgressMeter(
                MigrationProgress(
                    version: migration.version.text, description: migration.description, undoing: undoing, operation: i + 1,
                    operations: migration.operations.count, op: operation.name, table: operation.table, phase: .reading, read: 0, total: nil,
                    changed: record.counts[i], seconds: 0)
            ) { observer.event(.migrationProgress($0)) }
            do {
                try await gate()
                let countedByScan = UndoCheck.countedByScan(operation)
                let uncounted = !undoing && record.undoChecks.indices.contains(i) && record.undoChecks[i] == nil
                if uncounted {
                    // Counted before the operation's first write, and recorded with it: a run
                    // resumed inside the operation keeps the count made on the data before it.
                    // An entity step's own scan counts the entities it reads, recording the
                    // count as it goes; a step with a `where:` first counts, here, the ones its
                    // scan will not read.
                    var undoCheck = UndoCheck(tables: tables, blobs: blobs)
                    undoCheck.progress = meter
                    if !countedByScan {
                        record.undoChecks[i] = try await undoCheck.conflicts(operation)
                        try await save(record, fence)
                    } else if case .entities(let step) = operation, step.filterText != nil, record.checkpoint?.undoCheck == nil {
                        let unread = try await undoCheck.conflicts(operation, onlyUnselected: true)
                        record.checkpoint = MigrationRecord.Checkpoint(
                            operation: i, after: record.checkpoint?.after, pending: record.checkpoint?.pending,
                            undoCheck: MigrationRecord.UndoCheckProgress(scanned: nil, conflicts: unread))
                        try await save(record, fence)
                    }
                }
                switch operation {
                case .copyTable(let from, let to):
                    let hook = beforeCheckpoint
                    let check = self.check
                    record.counts[i] = try await CopyTableRun(tables: tables, from: from, to: to, shard: shard) {
                        try await hook?()
                        try check()
                    }.run()
                case .createTable(let table):
                    try await prove()
                    record.counts[i] = try await tables.ensureTable(table) ? 1 : 0
                case .deleteTable(let table):
                    try await prove()
                    do {
                        try await tables.deleteTable(table)
                        record.counts[i] = 1
                    } catch let error as AzureStorageError where error.status == 404 {
                        record.counts[i] = 0
                    }
                case .entities(let fileStep):
                    let step = try await LookupLoader.prepared(fileStep, tables: tables)
                    let ledger = self.ledger
                    let hook = beforeCheckpoint
                    let prove = self.prove
                    let check = self.check
                    var run = EntityStepRun(tables: tables, step: step, operation: i, record: record) {
                        try await hook?()
                        try await prove()
                        try await ledger.write($0, fence: fence)
                    }
                    run.check = check
                    run.prove = prove
                    run.countsUndoCheck = countedByScan && uncounted
                    run.pace = pace
                    defer { record = run.record }
                    run.progress = meter
                    try await run.run()
                case .blobs(let step):
                    let hook = beforeCheckpoint
                    let prove = self.prove
                    var run = BlobStepRun(blobs: blobs, step: step, account: blobs.account) {
                        try await hook?()
                        try await prove()
                    }
                    run.progress = meter
                    record.counts[i] += try await run.run()
                }
            } catch let stopped as EntityStepRun.Stopped {
                try await fail(&record, fence, "\(undoing ? "step" : "operation") \(i + 1) (\(operation.name)): \(stopped.message)", undoing: undoing)
                throw RunError(
                    undoing
                        ? "\(what) \(i + 1) (\(operation.name)) stopped: \(stopped.message); nothing after it was written. Fix the entity, then run the same undo again to resume it"
                        : "\(what) \(i + 1) (\(operation.name)) stopped: \(stopped.message); nothing after it was written. Fix the entity or the migration, then \(Setting.migrateRepair) lets apply resume"
                )
            } catch let error as AzureStorageError where Self.isPermanent(error) {
                try await fail(&record, fence, "\(undoing ? "step" : "operation") \(i + 1) (\(operation.name)): \(error)", undoing: undoing)
                throw RunError.explaining(error, while: "\(what) \(i + 1) (\(operation.name))")
            }
            meter.finish(changes: record.counts[i])
            done.changes = record.counts[i]
            report.operations.append(done)
            record.checkpoint = MigrationRecord.Checkpoint(operation: i + 1, after: nil, pending: nil)
            try await save(record, fence)
            let which = Self.event(migration, undoing: undoing, resumedAt: nil)
            observer.event(.migrationCheckpointed(which, operation: i + 1, changes: record.counts[i]))
        }
        report.retries = activity.snapshot.retries - retries
        report.backoffSeconds = activity.backoffSeconds - backoff
        return report
    }

    /// Records why the run stopped. An undo stays `undoing` (its checkpoint counts the undo's
    /// steps, which `apply` cannot resume); running it again resumes it.
    private func fail(_ record: inout MigrationRecord, _ fence: RecordFence, _ why: String, undoing: Bool) async throws {
        if !undoing { record.state = .failed }
        record.error = why
        record.endedAt = clock()
        try await ledger.write(record, fence: fence)
        observer.event(
            .migrationFailed(MigrationEvent(version: record.version, description: record.description, undoing: undoing, resumedAt: nil), reason: why))
    }

    static func event(_ migration: Migration, undoing: Bool, resumedAt: Int?) -> MigrationEvent {
        MigrationEvent(version: migration.version.text, description: migration.description, undoing: undoing, resumedAt: resumedAt)
    }

    /// A refusal that running again would meet again (a value too large, a name the service
    /// refuses), unlike a dropped connection or a busy service, which leave the run to resume.
    static func isPermanent(_ error: AzureStorageError) -> Bool {
        error.kind == .invalidRequest
            || (error.kind == .service && (400..<500).contains(error.status ?? 0) && ![408, 409, 412, 429].contains(error.status ?? 0))
    }
}
