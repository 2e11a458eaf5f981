import AzureStorage
import Foundation
import SeedKit

/// The migration files beside the target's ledger, version by version.
public struct MigrationStatus: Sendable {
    public enum State: String, Sendable {
        /// A file not yet applied.
        case pending
        case applied
        /// The version `baseline` recorded: the account counts as migrated up to it.
        case baseline
        /// A file at or below the baseline: counted as applied, never run.
        case belowBaseline = "below-baseline"
        /// Started and not finished; `apply` resumes it.
        case running
        /// Stopped by an entity it could not change; `repair` clears it.
        case failed
        /// Applied, but the file's bytes changed since.
        case checksumChanged = "checksum-changed"
        /// In the ledger, with no file.
        case missingFile = "missing-file"
        /// A pending file older than a version already applied.
        case outOfOrder = "out-of-order"
        /// `migrate undo` stopped before it finished; running it again resumes it.
        case undoing
        /// Put back by `migrate undo`: `apply` runs it again (from its file as it is now).
        case undone
        /// Being applied in shards (`--shard I/N`), not every shard finished yet.
        case inShards = "in-shards"
    }

    public struct Entry: Sendable {
        public var version: String
        public var description: String
        public var state: State
        public var migration: Migration?
        public var record: MigrationRecord?
        /// While it is applied in shards: each shard's own record.
        public var shards: [MigrationRecord] = []

        /// The file and the ledger's record of it, when there are both: always for `applied`,
        /// `running`, `undoing`, `failed` and `checksum-changed` entries; never for
        /// `missing-file` (no file) or `pending` (no record).
        public var fileAndRecord: (Migration, MigrationRecord)? {
            guard let migration, let record else { return nil }
            return (migration, record)
        }

        /// A `checksum-changed` entry whose file has neither the name nor the description the
        /// ledger recorded: not the migration that was applied edited, but another one under
        /// the same version — most often a folder other than the one the target was migrated
        /// from. Accepting its checksum would record as applied a migration that never ran.
        public var isAnotherMigration: Bool {
            guard state == .checksumChanged, let (migration, record) = fileAndRecord else { return false }
            return !migration.script.isExactly(record.script) && !migration.description.isExactly(record.description)
        }
    }

    public var entries: [Entry]
    /// What `migrate control` last asked of running applies (`status` reads it; nil where
    /// status was not asked for it).
    public var control: MigrationControl?
    /// Why the control record was not read: one azseed did not write (running applies ignore it).
    public var controlProblem: String?

    /// Entries `validate` fails on: a changed checksum, a missing file, an out-of-order file,
    /// a failed run.
    public var problems: [Entry] { entries.filter { [.checksumChanged, .missingFile, .outOfOrder, .failed, .undoing].contains($0.state) } }

    /// What `apply` runs, in order: the interrupted one first (it is the oldest), then pending
    /// and undone ones.
    public var runnable: [Entry] { entries.filter { [.pending, .running, .undone, .inShards].contains($0.state) && $0.migration != nil } }

    init(files: MigrationSet, records: [MigrationRecord], shards: [MigrationRecord] = []) {
        var byVersion: [String: MigrationRecord] = [:]
        for record in records { byVersion[record.version] = record }
        var shardsByVersion: [String: [MigrationRecord]] = [:]
        for record in shards { shardsByVersion[record.version, default: []].append(record) }
        let baseline = records.filter { $0.state == .baseline }.compactMap { MigrationVersion($0.version) }.max()
        let newestApplied = records.filter { $0.state != .baseline && $0.state != .undone }.compactMap { MigrationVersion($0.version) }.max()
        var entries: [Entry] = []
        var seen: Set<String> = []
        for migration in files.migrations {
            let key = migration.version.canonical
            seen.insert(key)
            let record = byVersion[key]
            let sameFile = record?.checksum == migration.checksum
            let state: State
            switch record?.state {
            case nil, .undone?:
                // An undone migration runs again as a pending one does, from its file as it is
                // now (changing the file after an undo is what an undo is for).
                if let baseline, migration.version <= baseline {
                    state = .belowBaseline
                } else if let newestApplied, migration.version < newestApplied {
                    state = .outOfOrder
                } else {
                    state = record == nil ? .pending : .undone
                }
            case .baseline?: state = .baseline
            case .applied?: state = sameFile ? .applied : .checksumChanged
            case .running?: state = sameFile ? .running : .checksumChanged
            case .failed?: state = .failed
            case .undoing?: state = sameFile ? .undoing : .checksumChanged
            }
            var entry = Entry(version: migration.version.text, description: migration.description, state: state, migration: migration, record: record)
            if [.pending, .undone].contains(state), let parts = shardsByVersion[key], !parts.isEmpty {
                entry.shards = parts.sorted { ($0.shard?.index ?? 0) < ($1.shard?.index ?? 0) }
                entry.state = parts.allSatisfy { $0.checksum == migration.checksum } ? .inShards : .checksumChanged
            }
            entries.append(entry)
        }
        for record in records where !seen.contains(record.version) {
            entries.append(
                Entry(
                    version: record.version, description: record.description,
                    state: record.state == .baseline ? .baseline : record.state == .undone ? .undone : .missingFile,
                    record: record))
        }
        // A record's version that does not parse (a damaged ledger is refused before this) sorts first.
        self.entries = entries.sorted {
            switch (MigrationVersion($0.version), MigrationVersion($1.version)) {
            case (let a?, let b?): a < b
            case (nil, _?): true
            default: false
            }
        }
    }
}
