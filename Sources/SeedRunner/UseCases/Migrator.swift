import AzureStorage
import Foundation
import SeedKit

/// `azseed migrate`: versioned migrations of the data already in a target, for any Swift
/// program. The files are read and validated in full before the target is opened; the
/// target's ledger (``ReservedNames/ledgerTable``, PartitionKey `migration`) records each
/// migration's checksum, state, counts and checkpoint.
public struct Migrator: Sendable {
    public var target: RunTarget
    public let folder: URL
    public let observer: any RunObserver
    /// `azseed <version>`, as the ledger records who applied.
    public let tool: String
    /// The clock (tests inject one).
    public var clock: @Sendable () -> EdmDateTime = Seeder.clock
    /// Runs before each batch's checkpoint is recorded: a test throws from it to stop a run
    /// exactly between two batches, as a kill would.
    package var beforeCheckpoint: (@Sendable () async throws -> Void)? = nil

    public init(target: RunTarget, folder: URL, observer: any RunObserver = SilentObserver(), tool: String = "azseed") {
        self.target = target
        self.folder = folder
        self.observer = observer
        self.tool = tool
    }

    /// The migration files, read and checked on the blocking threads.
    public func load() async throws -> MigrationSet {
        let folder = self.folder
        return try await BlockingPool.run { try MigrationSet.load(folder) }
    }

    /// The files beside the ledger.
    public func status() async throws -> MigrationStatus {
        let files = try await load()
        return try await session { session in try await Ledger(tables: session.run.tables).status(of: files)
        }
    }

    /// The dry run: what each pending (or interrupted) migration up to `to` would change, with
    /// a few changes field by field; writes nothing. Operations are simulated in order, so an
    /// operation sees what the ones before it (in its migration and earlier ones) would make.
    public func plan(to: MigrationVersion? = nil) async throws -> (MigrationStatus, [MigrationReport]) {
        let files = try await load()
        return try await session { session in
            let status = try await Ledger(tables: session.run.tables).status(of: files)
            var simulation = try await MigrationSimulation(tables: session.run.tables, blobs: session.run.blobs, observer: observer)
            simulation.shard = target.shard
            var reports: [MigrationReport] = []
            for entry in Self.chosen(status, to: to) {
                guard let part = try Self.shardPart(entry, shard: target.shard) else { continue }
                reports.append(try await simulation.plan(part))
            }
            return (status, reports)
        }
    }

    /// Applies the pending migrations up to `to` in order, resuming an interrupted one at its
    /// checkpoint. Refused, before any write, while `validate` finds a problem. With `backup`,
    /// first writes a snapshot of every table and container they touch (that exists) into that
    /// folder — `azseed import` restores it — holding the lock, before the first change.
    public func apply(to: MigrationVersion? = nil, backup: URL? = nil) async throws -> [MigrationReport] {
        let files = try await load()
        let tool = self.tool
        let clock = self.clock
        if let backup {
            let data = target.embeddedDataDirectory
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
        return try await locked(sharded: true) { session, lock in
            let ledger = Ledger(tables: session.run.tables)
            let status = try await ledger.status(of: files)
            if let problem = status.problems.first {
                throw RunError(Self.refusal(problem, count: status.problems.count))
            }
            let chosen = Self.chosen(status, to: to)
            try Self.checkShards(chosen, shard: target.shard)
            if let backup, !chosen.isEmpty { try await self.backup(chosen, into: backup, session) }
            var reports: [MigrationReport] = []
            for entry in chosen {
                var run = MigrationRun(
                    tables: session.run.tables, blobs: session.run.blobs, ledger: ledger, tool: tool, host: Self.host, clock: clock,
                    observer: observer)
                run.shard = target.shard
                let hook = beforeCheckpoint
                run.beforeCheckpoint = {
                    try lock.check()
                    try await hook?()
                }
                run.prove = { try await lock.prove() }
                run.check = { try lock.check() }
                guard let part = try Self.shardPart(entry, shard: target.shard) else {
                    // This shard finished its part earlier: the migration may wait only for the record.
                    try await finishShards(entry, ledger: ledger)
                    continue
                }
                var report = try await run.apply(part)
                if target.shard != nil, !(try await finishShards(entry, ledger: ledger)) { report.state = "applied by this shard" }
                observer.note(
                    "migration \(report.version) \(report.state): \(report.operations.map { "\($0.op) \($0.changes)" }.joined(separator: ", "))")
                reports.append(report)
            }
            return reports
        }
    }

    /// The dry run of ``undo(to:)``: what putting back each applied migration from the newest
    /// down to `version` would change, step by step; writes nothing. Refused as `undo` would be.
    public func planUndo(to version: MigrationVersion) async throws -> [MigrationReport] {
        let files = try await load()
        return try await session { session in
            let status = try await Ledger(tables: session.run.tables).status(of: files)
            let chain = try Self.undoChain(status, to: version)
            // Every migration's check first, on the data as it is: a chain is refused whole,
            // before its first write (each is checked again just before its own undo).
            for (entry, undo) in chain where entry.state != .undoing {
                try await UndoCheck(tables: session.run.tables, blobs: session.run.blobs).beforeUndo(undo, version: entry.version)
            }
            var simulation = try await MigrationSimulation(tables: session.run.tables, blobs: session.run.blobs, observer: observer)
            var reports: [MigrationReport] = []
            for (entry, undo) in chain {
                if entry.state != .undoing {
                    try await UndoCheck(tables: session.run.tables, blobs: session.run.blobs).beforeUndo(undo, version: entry.version)
                }
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
    public func undo(to version: MigrationVersion) async throws -> [MigrationReport] {
        let files = try await load()
        let tool = self.tool
        let clock = self.clock
        return try await locked { session, lock in
            let ledger = Ledger(tables: session.run.tables)
            let status = try await ledger.status(of: files)
            var reports: [MigrationReport] = []
            let chain = try Self.undoChain(status, to: version)
            // Every migration's check first, on the data as it is: a chain is refused whole,
            // before its first write (each is checked again just before its own undo).
            for (entry, undo) in chain where entry.state != .undoing {
                try await UndoCheck(tables: session.run.tables, blobs: session.run.blobs).beforeUndo(undo, version: entry.version)
            }
            // Records a sharded apply left (a shard's part) would make apply skip that part later.
            let shardRecords = try await ledger.shardRecords()
            for (entry, _) in chain { try await ledger.deleteShardRecords(entry.version, among: shardRecords) }
            for (entry, _) in chain {
                var run = MigrationRun(
                    tables: session.run.tables, blobs: session.run.blobs, ledger: ledger, tool: tool, host: Self.host, clock: clock,
                    observer: observer)
                let hook = beforeCheckpoint
                run.beforeCheckpoint = {
                    try lock.check()
                    try await hook?()
                }
                run.prove = { try await lock.prove() }
                run.check = { try lock.check() }
                let report = try await run.undo(entry)
                observer.note(
                    "migration \(report.version) undone: \(report.operations.map { "\($0.op) \($0.changes)" }.joined(separator: ", "))")
                reports.append(report)
            }
            return reports
        }
    }

    /// The migrations `undo` down to `version` puts back, newest first, each with its undo.
    static func undoChain(_ status: MigrationStatus, to version: MigrationVersion) throws -> [(MigrationStatus.Entry, Migration)] {
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
            let migration = entry.migration!
            let record = entry.record!
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
                if let (i, n) = record.undoChecks.enumerated().first(where: { ($0.element ?? 0) > 0 }).map({ ($0.offset, $0.element!) }) {
                    let operation = migration.operations[i]
                    throw RunError(
                        "migration \(entry.version), operation \(i + 1) (\(operation.name) on \(operation.table)): when it was applied, \(n) \(operation.isBlobOperation ? "blob\(n == 1 ? "" : "s")" : "entit\(n == 1 ? "y" : "ies")") already looked like what it makes, or changed while it ran,, so undo cannot tell \(n == 1 ? "it" : "them") from the ones it changed; restore a snapshot of the data from before it instead (\(Setting.migrateBackup) takes one; \(Setting.importSnapshotPrune) restores it)\(nothing)"
                    )
                }
            }
            chain.append((entry, migration))
        }
        return chain.map { entry, migration in
            (entry, migration.undo(appliedCounts: entry.record!.appliedCounts ?? entry.record!.counts))
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
            observer.reading($0)
        }
        let what = (tables.map { "table \($0)" } + containers.map { "container \($0)" }).joined(separator: ", ")
        observer.note(
            "backup of \(what.isEmpty ? "nothing (no table or container it touches exists yet)" : what) (\(summary.entities.reduce(0) { $0 + $1.count }) entities, \(summary.blobs) blobs) written to \(folder.relativePathForMessages); \(Setting.importSnapshotPrune) with that folder restores them, removing what the migrations add to them"
        )
    }

    /// Ends whoever holds the account's migrate lock, at once: for a run that is gone (killed
    /// without releasing it; a lease not renewed also ends by itself within 60 s). True when
    /// there was a lock to break.
    public func breakLock() async throws -> Bool {
        try await session { session in try await MigrationLock.breakLock(session.run.blobs, host: Self.host) }
    }

    /// Runs `body` holding the account's migrate lock, released however `body` ends.
    private func locked<T: Sendable>(sharded: Bool = false, _ body: (StorageSession, MigrationLock) async throws -> T) async throws -> T {
        let holder = MigrationLock.holder(tool: tool, host: Self.host, pid: getpid(), since: clock())
        return try await session { session in
            let lock = try await MigrationLock.acquire(
                session.run.blobs, holder: holder, timeout: target.lockTimeout, observer: observer, shard: sharded ? target.shard : nil)
            do {
                let result = try await body(session, lock)
                await lock.release()
                return result
            } catch {
                await lock.release()
                throw error
            }
        }
    }

    /// Counts the target as migrated up to `version`: one `baseline` record; files at or
    /// below it are never run. Refused when the ledger already holds migrations.
    public func baseline(_ version: MigrationVersion, description: String = "baseline") async throws -> MigrationRecord {
        _ = try await load()
        let tool = self.tool
        let clock = self.clock
        return try await locked { session, _ in
            let ledger = Ledger(tables: session.run.tables)
            let records = try await ledger.migrationRecords()
            if let first = records.first {
                throw RunError(
                    "the target's ledger already holds migration \(first.version) (\(first.state.rawValue)); baseline marks an account that has no migration history"
                )
            }
            var record = MigrationRecord(
                version: version.canonical, description: description, script: "", checksum: "", state: .baseline, startedAt: clock(), tool: tool,
                host: Self.host)
            record.endedAt = record.startedAt
            try await ledger.write(record)
            return record
        }
    }

    /// What `repair` did: failed runs cleared (resumable again), records without a file
    /// removed, checksums realigned.
    public struct Repair: Sendable {
        public var cleared: [String] = []
        /// Failed runs whose file changed since: they start over (every operation is safe to run again).
        public var restarted: [String] = []
        public var removed: [String] = []
        public var realigned: [String] = []
        /// Applied migrations whose file changed, left as they are (no `acceptChecksums`).
        public var unresolved: [String] = []
    }

    /// Clears failed runs (their checkpoints kept, so `apply` resumes where they stopped),
    /// removes ledger records whose file is gone, and with `acceptChecksums` records the
    /// files' current checksums for applied migrations whose files changed.
    public func repair(acceptChecksums: Bool) async throws -> Repair {
        let files = try await load()
        return try await locked { session, _ in
            let ledger = Ledger(tables: session.run.tables)
            let status = try await ledger.status(of: files)
            var done = Repair()
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
                        if let unsafe = ran.first(where: { !Self.isIdempotent($0) }) {
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
                case .missingFile:
                    try await ledger.deleteMigrationRecord(record.version)
                    done.removed.append(record.version)
                case .checksumChanged where !acceptChecksums:
                    done.unresolved.append(record.version)
                case .checksumChanged where acceptChecksums:
                    record.checksum = entry.migration!.checksum
                    record.description = entry.migration!.description
                    record.script = entry.migration!.script
                    try await ledger.write(record)
                    done.realigned.append(record.version)
                default: break
                }
            }
            return done
        }
    }

    /// Whether running an operation twice is the same as once.
    static func isIdempotent(_ operation: MigrationOperation) -> Bool {
        if case .entities(let step) = operation { return step.change.isIdempotent }
        return true
    }

    static func chosen(_ status: MigrationStatus, to: MigrationVersion?) -> [MigrationStatus.Entry] {
        status.runnable.filter { entry in to.map { MigrationVersion(entry.version)! <= $0 } ?? true }
    }

    /// Why `apply` refuses while a problem stands, and what to do: the first of `count`.
    /// `writing` false (validate) leaves out that nothing was written.
    public static func refusal(_ problem: MigrationStatus.Entry, count: Int, writing: Bool = true) -> Phrase {
        let more: Phrase = count > 1 ? " (and \(count - 1) more; see \(Setting.migrateStatus))" : ""
        let end: Phrase = writing ? "; nothing was written" : ""
        let which = "migration \(problem.version)" + (problem.migration.map { " (\(Printable.escaped($0.script, quotes: false)))" } ?? "")
        switch problem.state {
        case .checksumChanged:
            return
                "\(which) was applied from a file whose bytes have changed since (checksum); restore the file, or accept it with \(Setting.migrateAcceptChecksums)\(more)\(end)"
        case .missingFile:
            return
                "\(which) is in the target's ledger but its file is not in the migrations folder; restore it, or remove the record with \(Setting.migrateRepair)\(more)\(end)"
        case .undoing:
            return
                "\(which) is being undone and the undo stopped\(problem.record?.error.map { " (\(Printable.escaped($0, quotes: false)))" } ?? ""); run \(Setting.migrateUndo) again, with \(problem.version) or the older version the undo was going to, to finish it\(more)\(end)"
        case .outOfOrder:
            return "\(which) is older than a version already applied; give it a version after the newest applied one\(more)\(end)"
        default:
            return
                "\(which) failed\(problem.record?.error.map { " (\(Printable.escaped($0, quotes: false)))" } ?? ""); fix the cause, then \(Setting.migrateRepair) lets apply resume it\(more)\(end)"
        }
    }

    private func session<T>(_ body: (StorageSession) async throws -> T) async throws -> T {
        try await withSession(target, observer: observer, body)
    }

    /// This machine's name, as the ledger records who ran a migration.
    static let host: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}
