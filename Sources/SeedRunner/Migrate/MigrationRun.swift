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

    func apply(_ entry: MigrationStatus.Entry) async throws -> MigrationReport {
        let migration = entry.migration!
        var record: MigrationRecord
        if let existing = entry.record, existing.state == .running {
            record = existing
            observer.note(
                "resuming migration \(migration.version.text) (\(Printable.escaped(migration.description, quotes: false))) at operation \((record.checkpoint?.operation ?? 0) + 1)"
            )
        } else {
            record = MigrationRecord(
                version: migration.version.canonical, description: migration.description, script: migration.script, checksum: migration.checksum,
                state: .running, startedAt: clock(), tool: tool, host: host)
            record.checkpoint = MigrationRecord.Checkpoint(operation: 0, after: nil, pending: nil)
        }
        if record.counts.count != migration.operations.count {
            record.counts =
                Array(record.counts.prefix(migration.operations.count))
                + Array(repeating: 0, count: max(0, migration.operations.count - record.counts.count))
        }
        try await ledger.write(record)
        let start = record.checkpoint?.operation ?? 0
        var report = MigrationReport(version: migration.version.text, description: migration.description, state: "applied", operations: [])
        for (i, operation) in migration.operations.enumerated() {
            var done = OperationReport(op: operation.name, table: operation.table)
            done.isBlobOperation = operation.isBlobOperation
            if i < start {
                done.changes = record.counts[i]
                done.done = true
                report.operations.append(done)
                continue
            }
            do {
                switch operation {
                case .copyTable(let from, let to):
                    let hook = beforeCheckpoint
                    record.counts[i] = try await CopyTableRun(tables: tables, from: from, to: to) { try await hook?() }.run()
                case .createTable(let table):
                    record.counts[i] = try await tables.ensureTable(table) ? 1 : 0
                case .deleteTable(let table):
                    do {
                        try await tables.deleteTable(table)
                        record.counts[i] = 1
                    } catch let error as AzureStorageError where error.status == 404 {
                        record.counts[i] = 0
                    }
                case .entities(let step):
                    let ledger = self.ledger
                    let hook = beforeCheckpoint
                    var run = EntityStepRun(tables: tables, step: step, operation: i, record: record) {
                        try await hook?()
                        try await ledger.write($0)
                    }
                    defer { record = run.record }
                    let observer = self.observer
                    run.onRead = { observer.reading($0) }
                    try await run.run()
                case .blobs(let step):
                    let hook = beforeCheckpoint
                    record.counts[i] += try await BlobStepRun(blobs: blobs, step: step, account: blobs.account) { try await hook?() }.run()
                }
            } catch let stopped as EntityStepRun.Stopped {
                try await fail(&record, "operation \(i + 1) (\(operation.name)): \(stopped.message)")
                throw RunError(
                    "migration \(migration.version.text), operation \(i + 1) (\(operation.name)) stopped: \(stopped.message); nothing after it was written. Fix the entity or the migration, then \(Setting.migrateRepair) lets apply resume"
                )
            } catch let error as AzureStorageError where Self.isPermanent(error) {
                try await fail(&record, "operation \(i + 1) (\(operation.name)): \(error)")
                throw RunError.explaining(error, while: "migration \(migration.version.text), operation \(i + 1) (\(operation.name))")
            }
            done.changes = record.counts[i]
            report.operations.append(done)
            record.checkpoint = MigrationRecord.Checkpoint(operation: i + 1, after: nil, pending: nil)
            try await ledger.write(record)
        }
        record.state = .applied
        record.endedAt = clock()
        record.checkpoint = nil
        try await ledger.write(record)
        return report
    }

    private func fail(_ record: inout MigrationRecord, _ why: String) async throws {
        record.state = .failed
        record.error = why
        record.endedAt = clock()
        try await ledger.write(record)
    }

    /// A refusal that running again would meet again (a value too large, a name the service
    /// refuses), unlike a dropped connection or a busy service, which leave the run to resume.
    static func isPermanent(_ error: AzureStorageError) -> Bool {
        error.kind == .invalidRequest
            || (error.kind == .service && (400..<500).contains(error.status ?? 0) && ![408, 409, 412, 429].contains(error.status ?? 0))
    }
}
