import AzureStorage
import Foundation
import SeedKit

/// `migrate apply` (Flyway's migrate): the pending migrations in order, holding the lock,
/// each write fenced by it; `--backup` first.
public struct MigrateApply: Sendable {
    public let migrator: Migrator

    public init(_ migrator: Migrator) { self.migrator = migrator }

    /// Applies the pending migrations up to `to` in order, resuming an interrupted one at its
    /// checkpoint. Refused, before any write, while `validate` finds a problem. With `backup`,
    /// first writes a snapshot of every table and container they touch (that exists) into that
    /// folder — `azseed import` restores it — holding the lock, before the first change.
    public func run(to: MigrationVersion? = nil, backup: URL? = nil) async throws -> [MigrationReport] {
        let files = try await migrator.load()
        if let backup {
            let data = migrator.target.embeddedDataDirectory
            try await BlockingPool.run {
                if let data { try FolderOverlap.check(output: backup, setting: .backupFolder, inputs: [("the storage's data folder", data)]) }
                try FolderOverlap.checkNoDataFolder(output: backup, setting: .backupFolder)
                if let problem = PrivateFolder.problem(backup) ?? PrivateFolder.parentProblem(backup.deletingLastPathComponent()) {
                    throw GenerationError("\(Setting.backupFolder) \(backup.relativePathForMessages): \(problem); name a new folder of your own")
                }
                // A backup is never written over anything: the folder is new, or empty.
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: backup.path, isDirectory: &isFolder),
                    !isFolder.boolValue || !((try? FileManager.default.contentsOfDirectory(atPath: backup.path).isEmpty) ?? false)
                {
                    throw GenerationError(
                        usage: true, "\(Setting.backupFolder) \(backup.relativePathForMessages) exists and is not an empty folder; name a new folder")
                }
            }
        }
        return try await migrator.locked(sharded: true) { session, lock in
            let ledger = Ledger(tables: session.run.tables)
            let status = try await ledger.status(of: files)
            if let problem = status.problems.first {
                throw RunError(Migrator.refusal(problem, count: status.problems.count))
            }
            let chosen = Migrator.chosen(status, to: to)
            try Migrator.checkAcknowledged(chosen)
            try Migrator.checkShards(chosen, shard: migrator.target.shard)
            if let backup, !chosen.isEmpty { try await self.backup(chosen, into: backup, session) }
            var reports: [MigrationReport] = []
            let control = chosen.isEmpty ? nil : try await migrator.controlWatcher(ledger)
            defer { control?.stop() }
            for entry in chosen {
                var run = migrator.run(session, ledger: ledger, lock: lock, control: control)
                run.shard = migrator.target.shard
                guard let part = try Migrator.shardPart(entry, shard: migrator.target.shard) else {
                    // This shard finished its part earlier: the migration may wait only for the record.
                    try await migrator.finishShards(entry, ledger: ledger)
                    continue
                }
                var report = try await run.apply(part)
                if migrator.target.shard != nil, !(try await migrator.finishShards(entry, ledger: ledger)) { report.state = "applied by this shard" }
                migrator.observer.event(.migrationFinished(report))
                reports.append(report)
            }
            return reports
        }
    }

    /// The snapshot `apply --backup` writes: the tables and containers the migrations touch.
    private func backup(_ chosen: [MigrationStatus.Entry], into folder: URL, _ session: StorageSession) async throws {
        var tables: [String] = []
        var containers: [String] = []
        for operation in chosen.flatMap({ $0.migration?.operations ?? [] }) {
            switch operation {
            case .createTable: break
            case .copyTable(_, let to): tables.append(to)
            case .deleteTable(let table): tables.append(table)
            case .entities(let step): tables.append(step.table)
            case .blobs(let step):
                containers.append(step.container)
                if case .move(let to, _) = step.change { containers.append(to) }
            }
        }
        let existingTables = Set(try await session.run.tables.listTables().map { $0.lowercased() })
        let existingContainers = Set(try await session.run.blobs.listContainers())
        var seen: Set<String> = []
        tables = tables.filter { existingTables.contains($0.lowercased()) && seen.insert("t:" + $0.lowercased()).inserted }
        containers = containers.filter { existingContainers.contains($0) && seen.insert("c:" + $0).inserted }
        let exporter = Exporter(run: session.run)
        let summary = try await exporter.export(containers: containers, tables: tables, dataset: nil, to: folder, force: false) {
            migrator.observer.reading($0)
        }
        let what = (tables.map { "table \($0)" } + containers.map { "container \($0)" }).joined(separator: ", ")
        migrator.observer.note(
            "backup of \(what.isEmpty ? "nothing (no table or container it touches exists yet)" : what) (\(summary.entities.reduce(0) { $0 + $1.count }) entities, \(summary.blobs) blobs) written to \(folder.relativePathForMessages); \(Setting.importSnapshotPrune) with that folder restores them, removing what the migrations add to them"
        )
    }
}
