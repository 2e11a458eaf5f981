import AzureStorage
import Foundation
import SeedKit

/// `migrate undo` (Flyway's undo): puts back the applied migrations from the newest down to a
/// version, exactly, holding the lock; refused whole before its first write.
public struct MigrateUndo: Sendable {
    public let migrator: Migrator

    public init(_ migrator: Migrator) { self.migrator = migrator }

    /// The dry run of ``run(to:)``: what putting back each applied migration from the newest
    /// down to `version` would change, step by step; writes nothing. Refused as `undo` would be.
    public func plan(to version: MigrationVersion) async throws -> [MigrationReport] {
        let files = try await migrator.load()
        return try await migrator.session { session in
            let status = try await Ledger(tables: session.run.tables).status(of: files)
            let chain = try Self.chain(status, to: version)
            // Every migration's check, on the data as it is: refused as the undo would be (the
            // dry run writes nothing between them, so each is checked once).
            for (entry, undo) in chain where entry.state != .undoing {
                try await UndoCheck(tables: session.run.tables, blobs: session.run.blobs).beforeUndo(undo, version: entry.version)
            }
            var simulation = try await MigrationSimulation(tables: session.run.tables, blobs: session.run.blobs, observer: migrator.observer)
            var reports: [MigrationReport] = []
            for (entry, undo) in chain {
                var report = try await simulation.plan(
                    MigrationStatus.Entry(
                        version: entry.version, description: undo.description, state: entry.state == .undoing ? .running : .pending,
                        migration: undo, record: entry.state == .undoing ? entry.record : nil))
                report.state = entry.state == .undoing ? "undoing: resumes" : "undo"
                reports.append(report)
            }
            return reports
        }
    }

    /// `migrate undo`: puts back every applied migration from the newest down to `version`,
    /// newest first, each exactly (``Migration/undo(appliedCounts:)``), holding the lock. Refused
    /// as a whole, before any write, when one holds an operation that cannot be undone, or
    /// when undo could not tell apart what it changed (counted when it was applied).
    public func run(to version: MigrationVersion) async throws -> [MigrationReport] {
        let files = try await migrator.load()
        return try await migrator.locked { session, lock in
            let ledger = Ledger(tables: session.run.tables)
            let status = try await ledger.status(of: files)
            var reports: [MigrationReport] = []
            let chain = try Self.chain(status, to: version)
            // Every migration's check first, on the data as it is: a chain is refused whole,
            // before its first write (each is checked again just before its own undo).
            for (entry, undo) in chain where entry.state != .undoing {
                try await UndoCheck(tables: session.run.tables, blobs: session.run.blobs).beforeUndo(undo, version: entry.version)
            }
            // Records a sharded apply left (a shard's part) would make apply skip that part later.
            let shardRecords = try await ledger.shardRecords()
            for (entry, _) in chain { try await ledger.deleteShardRecords(entry.version, among: shardRecords) }
            let control = try await migrator.controlWatcher(ledger)
            defer { control.stop() }
            for (entry, _) in chain {
                let run = migrator.run(session, ledger: ledger, lock: lock, control: control)
                let report = try await run.undo(entry)
                migrator.observer.event(.migrationFinished(report))
                reports.append(report)
            }
            return reports
        }
    }

    /// The migrations `undo` down to `version` puts back, newest first, each with its undo.
    static func chain(_ status: MigrationStatus, to version: MigrationVersion) throws -> [(MigrationStatus.Entry, Migration)] {
        let undo: Phrase = "\(Setting.migrateUndo)"
        let nothing = "; nothing was written"
        func blocked(_ entry: MigrationStatus.Entry) -> Phrase? {
            let which = "migration \(entry.version)"
            switch entry.state {
            case .running: return "\(which) is being applied or was interrupted; finish it with \(Setting.migrateApply) first, then undo"
            case .failed: return "\(which) failed; \(Setting.migrateRepair) and \(Setting.migrateApply) finish it, then undo"
            case .checksumChanged:
                return "\(which)'s file has changed since it was applied; restore the file as it was applied, then undo"
            case .missingFile: return "\(which)'s file is not in the migrations folder; restore it, then undo"
            case .baseline, .belowBaseline: return "\(which) is counted as applied by a baseline, never run; there is nothing undo can put back"
            case .inShards: return "\(which) is being applied in shards; finish every shard (\(Setting.shard) I/N), then undo"
            default: return nil
            }
        }
        let inRange = status.entries.filter { (MigrationVersion($0.version) ?? version) >= version }
        guard let target = inRange.first(where: { MigrationVersion($0.version) == version }) else {
            throw RunError(
                "migration \(version.canonical) is neither in the migrations folder nor in the target's ledger; \(Setting.migrateStatus) lists them\(nothing)"
            )
        }
        if [.pending, .undone, .outOfOrder].contains(target.state) {
            throw RunError("migration \(target.version) is not applied (\(target.state.rawValue)); there is nothing to undo\(nothing)")
        }
        for entry in inRange { if let why = blocked(entry) { throw RunError("\(why)\(nothing)") } }
        var chain: [(MigrationStatus.Entry, Migration)] = []
        for entry in inRange.reversed() where entry.state == .applied || entry.state == .undoing {
            // Applied and undoing entries hold their file and their record (MigrationStatus).
            guard let (migration, record) = entry.fileAndRecord else { continue }
            if entry.state == .applied {
                if let (i, operation) = migration.firstNotInvertible {
                    throw RunError(
                        "migration \(entry.version), operation \(i + 1) (\(operation.name) on \(operation.table)) cannot be undone exactly; restore a snapshot of the data from before it instead (\(Setting.migrateBackup) takes one; \(Setting.importSnapshotPrune) restores it)\(nothing)"
                    )
                }
                guard record.undoChecks.count == migration.operations.count, !record.undoChecks.contains(where: { $0 == nil }) else {
                    throw RunError(
                        "migration \(entry.version) was applied without the checks \(undo) needs (by an older azseed); restore a snapshot of the data before it instead\(nothing)"
                    )
                }
                if let (i, n) = record.undoChecks.enumerated().lazy.compactMap({ i, n in n.flatMap { $0 > 0 ? (i, $0) : nil } }).first {
                    let operation = migration.operations[i]
                    throw RunError(
                        "migration \(entry.version), operation \(i + 1) (\(operation.name) on \(operation.table)): when it was applied, \(n) \(operation.isBlobOperation ? "blob\(n == 1 ? "" : "s")" : "entit\(n == 1 ? "y" : "ies")") already looked like what it makes, or changed while it ran, so undo cannot tell \(n == 1 ? "it" : "them") from the ones it changed; restore a snapshot of the data from before it instead (\(Setting.migrateBackup) takes one; \(Setting.importSnapshotPrune) restores it)\(nothing)"
                    )
                }
            }
            chain.append((entry, migration.undo(appliedCounts: record.appliedCounts ?? record.counts)))
        }
        return chain
    }
}
