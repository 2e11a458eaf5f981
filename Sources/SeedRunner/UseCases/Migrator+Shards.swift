import AzureStorage
import Foundation
import SeedKit

/// `migrate apply --shard I/N`: N processes, each applying every migration to its part of the
/// data (entities by partition, blobs by name), each with its own lock and its own record per
/// migration (``MigrationRecord/shardPartition``). The migration's record is written — and
/// counts as applied — when the last shard finishes it.
extension Migrator {
    /// Refuses, before any write, what a run cannot do with shards as they stand: an unsharded
    /// run while shards are midway, a shard of another split (other N), a migration that cannot
    /// run in parts, a shard whose own run failed.
    static func checkShards(_ chosen: [MigrationStatus.Entry], shard: Shard?) throws {
        for entry in chosen {
            guard let shard else {
                if entry.state == .inShards {
                    let done = entry.shards.filter { $0.state == .applied }.count
                    let count = entry.shards.first?.shard?.count ?? 0
                    throw RunError(
                        "migration \(entry.version) is being applied in \(count) shards (\(done) finished); finish it with \(Setting.shard) I/\(count) for every shard that has not, then apply without it; nothing was written"
                    )
                }
                continue
            }
            // An unsharded run of it was interrupted (or runs still, its lock broken): its
            // pending batch is its record's alone, which a shard never reads — a shard taking
            // over would apply that batch again (issue 45).
            if let record = entry.record, record.shard == nil, record.state == .running || record.state == .failed {
                throw RunError(
                    "migration \(entry.version) was started without \(Setting.shard) and did not finish; finish it with \(Setting.migrateApply) without \(Setting.shard) (it resumes exactly), then shard the migrations after it; nothing was written"
                )
            }
            if let other = entry.shards.first(where: { $0.shard?.count != shard.count }), let count = other.shard?.count {
                throw RunError(
                    "migration \(entry.version) is being applied in \(count) shards; run every shard with \(Setting.shard) I/\(count), not I/\(shard.count); nothing was written"
                )
            }
            if let migration = entry.migration, let (i, operation) = migration.firstNotShardable {
                throw RunError(
                    "migration \(entry.version), operation \(i + 1) (\(operation.name) on \(operation.table)) cannot run in shards (one would delete the table while another works in it); apply it without \(Setting.shard); nothing was written"
                )
            }
            if let mine = entry.shards.first(where: { $0.shard == shard }), mine.state == .failed {
                throw RunError(
                    "shard \(shard) of migration \(entry.version) failed\(mine.error.map { " (\(Printable.escaped($0, quotes: false)))" } ?? ""); fix the cause, then \(Setting.migrateRepair) lets it resume; nothing was written"
                )
            }
        }
    }

    /// What this run applies of `entry`: all of it, or — for a shard — its part, resumed from
    /// the shard's own record; nil when the shard has finished its part.
    static func shardPart(_ entry: MigrationStatus.Entry, shard: Shard?) throws -> MigrationStatus.Entry? {
        guard let shard, let migration = entry.migration else { return entry }
        let mine = entry.shards.first { $0.shard == shard }
        if mine?.state == .applied { return nil }
        return MigrationStatus.Entry(
            version: entry.version, description: entry.description, state: mine?.state == .running ? .running : .pending,
            migration: migration.sharded(shard), record: mine)
    }

    /// Writes the migration's record once every shard has finished its part — counts summed,
    /// the earliest start and the latest end — and removes the shards' records. True when the
    /// migration counts as applied. Two shards finishing together both write the same record.
    @discardableResult
    func finishShards(_ entry: MigrationStatus.Entry, ledger: Ledger) async throws -> Bool {
        guard let shard = target.shard, let migration = entry.migration else { return true }
        if try await ledger.migrationRecords().contains(where: { $0.version == migration.version.canonical && $0.state == .applied }) {
            return true
        }
        let parts = try await ledger.shardRecords().filter { $0.version == migration.version.canonical && $0.shard?.count == shard.count }
        guard parts.count == shard.count, parts.allSatisfy({ $0.state == .applied && $0.checksum == migration.checksum }) else {
            observer.note(
                "migration \(entry.version): \(parts.filter { $0.state == .applied }.count) of \(shard.count) shards have finished; it counts as applied when all have"
            )
            return false
        }
        var record = MigrationRecord(
            version: migration.version.canonical, description: migration.description, script: migration.script, checksum: migration.checksum,
            state: .applied, startedAt: parts.map(\.startedAt).min()!, tool: tool, host: Self.host)
        record.endedAt = parts.compactMap(\.endedAt).max() ?? clock()
        record.counts = (0..<migration.operations.count).map { i in parts.reduce(0) { $0 + ($1.counts.indices.contains(i) ? $1.counts[i] : 0) } }
        if parts.allSatisfy({ $0.undoChecks.count == migration.operations.count }) {
            record.undoChecks = (0..<migration.operations.count).map { i in
                parts.contains { $0.undoChecks[i] == nil } ? nil : parts.reduce(0) { $0 + $1.undoChecks[i]! }
            }
        }
        try await ledger.write(record)
        try await ledger.deleteShardRecords(record.version, among: parts)
        observer.note("migration \(entry.version): all \(shard.count) shards have finished; it is applied")
        return true
    }
}

extension Ledger {
    /// The files beside the ledger's records, the shards' included.
    func status(of files: MigrationSet) async throws -> MigrationStatus {
        MigrationStatus(files: files, records: try await migrationRecords(), shards: try await shardRecords())
    }
}
