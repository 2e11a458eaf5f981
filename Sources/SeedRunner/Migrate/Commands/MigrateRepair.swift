import AzureStorage
import Foundation
import SeedKit

/// What `repair` did: failed runs cleared (resumable again), records without a file
/// removed, checksums realigned.
public struct MigrationRepair: Sendable {
    public var cleared: [String] = []
    /// Failed runs whose file changed since: they start over (every operation is safe to run again).
    public var restarted: [String] = []
    public var removed: [String] = []
    public var realigned: [String] = []
    /// Applied migrations whose file changed, left as they are (no `acceptChecksums`).
    public var unresolved: [String] = []
    /// Records of migrations applied from a program's Swift code that this run does not hold:
    /// kept (removing them would let that program apply them again).
    public var keptFromCode: [String] = []
}

/// `migrate repair` (Flyway's repair): failed runs cleared so apply resumes them, records
/// whose file is gone removed, and on request changed files' checksums accepted.
public struct MigrateRepair: Sendable {
    public let migrator: Migrator

    public init(_ migrator: Migrator) { self.migrator = migrator }

    /// Clears failed runs (their checkpoints kept, so `apply` resumes where they stopped),
    /// removes ledger records whose file is gone, and with `acceptChecksums` records the
    /// files' current checksums for applied migrations whose files changed.
    public func run(acceptChecksums: Bool) async throws -> MigrationRepair {
        let files = try await migrator.load()
        return try await migrator.locked { session, _ in
            let ledger = Ledger(tables: session.run.tables)
            let status = try await ledger.status(of: files)
            // Checked before the first write: another folder's migration under an applied
            // version means this is not the folder the target was migrated from. Accepting its
            // checksum would record as applied a migration that never ran, and the records this
            // folder has no file for would be removed.
            let others = status.entries.filter(\.isAnotherMigration)
            if let first = others.first {
                throw RunError(Migrator.refusal(first, count: others.count))
            }
            var done = MigrationRepair()
            // A shard whose own run failed resumes, as a failed migration does.
            for var part in try await ledger.shardRecords() where part.state == .failed {
                part.state = .running
                part.error = nil
                part.checkpoint?.pending = nil
                try await ledger.write(part)
                done.cleared.append("\(part.version) (shard \(part.shard.map(\.description) ?? "?"))")
            }
            for entry in status.entries {
                guard var record = entry.record else { continue }
                switch entry.state {
                case .failed:
                    if let migration = entry.migration, migration.checksum != record.checksum {
                        // The file changed since the run failed: its checkpoint points into the
                        // old operations. It starts over — unless an operation it had run, in the
                        // new file, would change an entity again when run twice.
                        let ran = migration.operations.prefix((record.checkpoint?.operation ?? migration.operations.count) + 1)
                        if let unsafe = ran.first(where: { !Migrator.isIdempotent($0) }) {
                            throw RunError(
                                "migration \(record.version) failed and its file has changed since; starting it over would run \(unsafe.name) on \(unsafe.table) again, which is not safe to run twice. Restore the file as it was when it failed, then \(Setting.migrateRepair) lets apply resume it"
                            )
                        }
                        try await ledger.deleteMigrationRecord(record.version)
                        done.restarted.append(record.version)
                        continue
                    }
                    record.state = .running
                    record.error = nil
                    // A batch that could not be told written or not is read again: the step is
                    // applied to what its entities hold now.
                    record.checkpoint?.pending = nil
                    try await ledger.write(record)
                    done.cleared.append(record.version)
                case .missingFile where record.script.hasSuffix(".swift"):
                    // Applied from a program's Swift code: its history is kept (only that program runs it).
                    done.keptFromCode.append(record.version)
                case .missingFile:
                    try await ledger.deleteMigrationRecord(record.version)
                    done.removed.append(record.version)
                case .checksumChanged where !acceptChecksums:
                    done.unresolved.append(record.version)
                case .checksumChanged where acceptChecksums:
                    // A changed checksum is a record beside its file: both are there.
                    guard let migration = entry.migration else { continue }
                    record.checksum = migration.checksum
                    record.description = migration.description
                    record.script = migration.script
                    try await ledger.write(record)
                    done.realigned.append(record.version)
                default: break
                }
            }
            return done
        }
    }
}
