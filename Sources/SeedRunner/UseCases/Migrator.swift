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
    /// Migrations written in Swift, run beside the folder's files in version order
    /// (``EntityMigration``).
    public var code: [any EntityMigration] = []
    /// How often a running apply or undo reads `migrate control`'s record (tests shorten it).
    public var controlInterval: Duration = .seconds(5)
    /// The clock (tests inject one).
    public var clock: @Sendable () -> EdmDateTime = Seeder.clock
    /// Runs before each batch's checkpoint is recorded: a test throws from it to stop a run
    /// exactly between two batches, as a kill would.
    package var beforeCheckpoint: (@Sendable () async throws -> Void)? = nil
    /// Entities written per second at most (`--max-rate`); nil: as fast as the service allows
    /// (``MigrationPace`` adapts the batches in flight to its answers either way).
    public var maxRate: Int? = nil

    /// Retries of each request of a migration, at least, and the longest wait before one, at
    /// most (unless the target's configuration turns retries off): a run may go on for hours
    /// against a service that asks it to back off, and though a stopped run resumes exactly, one
    /// request unlucky six times in a row (one in 1,400 at a 30% fault rate) should not stop
    /// it. Capped waits keep all the retries inside a request's retry window (three timeouts).
    public static let minimumRetries = 10
    public static let longestRetryWait: Duration = .seconds(2)

    public init(target: RunTarget, folder: URL, observer: any RunObserver = SilentObserver(), tool: String = "azseed") {
        var target = target
        if target.configuration.retry.maxRetries > 0 {
            target.configuration.retry.maxRetries = max(target.configuration.retry.maxRetries, Self.minimumRetries)
            target.configuration.retry.maxDelay = min(target.configuration.retry.maxDelay, Self.longestRetryWait)
        }
        self.target = target
        self.folder = folder
        self.observer = observer
        self.tool = tool
    }

    /// The migration files, read and checked on the blocking threads.
    public func load() async throws -> MigrationSet {
        let folder = self.folder
        // A program with migrations in Swift alone needs no folder of files.
        let noFolder = !code.isEmpty && !FileManager.default.fileExists(atPath: folder.path)
        var set = noFolder ? MigrationSet(folder: folder, migrations: []) : try await BlockingPool.run { try MigrationSet.load(folder) }
        guard !code.isEmpty else { return set }
        for registered in code {
            let migration = try registered.migration()
            if let file = set.migrations.first(where: { $0.version == migration.version }) {
                throw RunError(
                    "migration \(migration.version.text) is both \(file.script) and a migration in Swift (\(Printable.escaped(migration.description, quotes: false))); give each its own version"
                )
            }
            set.migrations.append(migration)
        }
        set.migrations.sort { $0.version < $1.version }
        return set
    }

    /// The files beside the ledger.
    public func status() async throws -> MigrationStatus {
        let files = try await load()
        return try await session { session in
            let ledger = Ledger(tables: session.run.tables)
            var status = try await ledger.status(of: files)
            do { status.control = try await ledger.control().0 } catch let damaged as MigrationControlDamaged {
                status.controlProblem = damaged.description
            }
            return status
        }
    }

    /// `migrate control`: writes `request` to the target's control record, which every apply
    /// and undo running on the target obeys within ``controlInterval`` (plus a batch in flight).
    /// Takes no lock: the runs it speaks to hold it.
    public func control(_ request: MigrationControl.Request) async throws -> MigrationControl {
        try await session { session in
            try await Ledger(tables: session.run.tables).request(request, by: "\(tool) on \(Self.host)", at: clock())
        }
    }

    /// `migrate plan`: ``MigratePlan``.
    public func plan(to: MigrationVersion? = nil) async throws -> (MigrationStatus, [MigrationReport]) {
        try await MigratePlan(self).run(to: to)
    }

    /// `migrate apply`: ``MigrateApply``.
    public func apply(to: MigrationVersion? = nil, backup: URL? = nil) async throws -> [MigrationReport] {
        try await MigrateApply(self).run(to: to, backup: backup)
    }

    /// `migrate undo --dry-run`: ``MigrateUndo/plan(to:)``.
    public func planUndo(to version: MigrationVersion) async throws -> [MigrationReport] {
        try await MigrateUndo(self).plan(to: version)
    }

    /// `migrate undo`: ``MigrateUndo``.
    public func undo(to version: MigrationVersion) async throws -> [MigrationReport] {
        try await MigrateUndo(self).run(to: version)
    }

    /// `migrate baseline`: ``MigrateBaseline``.
    public func baseline(_ version: MigrationVersion, description: String = "baseline") async throws -> MigrationRecord {
        try await MigrateBaseline(self).run(version, description: description)
    }

    public typealias Repair = MigrationRepair

    /// `migrate repair`: ``MigrateRepair``.
    public func repair(acceptChecksums: Bool) async throws -> Repair {
        try await MigrateRepair(self).run(acceptChecksums: acceptChecksums)
    }

    /// A run of one migration in `session`, every write fenced by `lock` (checked before each
    /// checkpoint, proved before each write that is not idempotent).
    func run(_ session: StorageSession, ledger: Ledger, lock: MigrationLock, control: MigrationControlWatcher? = nil) -> MigrationRun {
        var run = MigrationRun(
            tables: session.run.tables, blobs: session.run.blobs, ledger: ledger, tool: tool, host: Self.host, clock: clock, observer: observer)
        let hook = beforeCheckpoint
        run.beforeCheckpoint = {
            try lock.check()
            try await control?.gate()
            try await hook?()
        }
        run.gate = { try await control?.gate() }
        run.prove = { try await lock.prove() }
        run.check = { try lock.check() }
        run.pace = MigrationPace(
            ceiling: EntityStepRun.batchesInFlight, maxRate: maxRate, activity: session.run.configuration.activity, control: control)
        return run
    }

    /// Starts listening to `migrate control` for a run that writes (``MigrationControlWatcher``).
    func controlWatcher(_ ledger: Ledger) async throws -> MigrationControlWatcher {
        try await MigrationControlWatcher.start(ledger: ledger, observer: observer, interval: controlInterval)
    }

    /// Ends whoever holds the account's migrate lock, at once: for a run that is gone (killed
    /// without releasing it; a lease not renewed also ends by itself within 60 s). True when
    /// there was a lock to break.
    public func breakLock() async throws -> Bool {
        try await session { session in try await MigrationLock.breakLock(session.run.blobs, host: Self.host) }
    }

    /// Runs `body` holding the account's migrate lock, released however `body` ends.
    func locked<T: Sendable>(sharded: Bool = false, _ body: (StorageSession, MigrationLock) async throws -> T) async throws -> T {
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

    /// Whether running an operation twice is the same as once.
    static func isIdempotent(_ operation: MigrationOperation) -> Bool {
        if case .entities(let step) = operation { return step.change.isIdempotent }
        return true
    }

    static func chosen(_ status: MigrationStatus, to: MigrationVersion?) -> [MigrationStatus.Entry] {
        status.runnable.filter { entry in to.map { limit in entry.migration.map { $0.version <= limit } ?? false } ?? true }
    }

    /// Why `apply` refuses while a problem stands, and what to do: the first of `count`.
    /// `writing` false (validate) leaves out that nothing was written.
    public static func refusal(_ problem: MigrationStatus.Entry, count: Int, writing: Bool = true) -> Phrase {
        let more: Phrase = count > 1 ? " (and \(count - 1) more; see \(Setting.migrateStatus))" : ""
        let end: Phrase = writing ? "; nothing was written" : ""
        let which = "migration \(problem.version)" + (problem.migration.map { " (\(Printable.escaped($0.script, quotes: false)))" } ?? "")
        switch problem.state {
        case .checksumChanged where problem.isAnotherMigration:
            let record = problem.record!
            return
                "migration \(problem.version) in the target's ledger was applied from \(Printable.escaped(record.script, quotes: false)) ('\(Printable.escaped(record.description, quotes: false))'), but this folder's is \(Printable.escaped(problem.migration!.script, quotes: false)) ('\(Printable.escaped(problem.migration!.description, quotes: false))'): name the folder this target was migrated from (\(Setting.dataset) or \(Setting.migrationsFolder)); do not accept its checksum — that would record as applied a migration that never ran\(more)\(end)"
        case .checksumChanged:
            return
                "\(which) was applied from a file whose bytes have changed since (checksum); restore the file, or accept it with \(Setting.migrateAcceptChecksums)\(more)\(end)"
        case .missingFile where problem.record?.script.hasSuffix(".swift") ?? false:
            // Applied from a program's code (an EntityMigration): repairing would erase its history.
            return
                "\(which) was applied by a program from its Swift code, which this run does not hold; run migrations on this target from that program (it registers its code with Migrator.code) — do not repair the record away\(more)\(end)"
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

    func session<T>(_ body: (StorageSession) async throws -> T) async throws -> T {
        try await withSession(target, observer: observer, body)
    }

    /// This machine's name, as the ledger records who ran a migration.
    static let host: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}
