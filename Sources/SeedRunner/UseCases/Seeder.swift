import AzureStorage
import Foundation
import SeedKit

/// The dataset use cases — plan, apply (fresh or a saved plan), verify, reset — against one
/// target: what `azseed plan`, `apply`, `verify` and `reset` do, for any Swift program. Each
/// loads and checks the dataset before the target is opened, resolves the reference time
/// through the target's ledger, and closes the target when done.
public struct Seeder: Sendable {
    public let target: RunTarget
    public let observer: any RunObserver
    /// `azseed <version>`, as the ledger records who applied.
    public let tool: String
    /// The pending migrations run right after (`apply --migrate`): not announced as pending.
    public var migratesAfter = false

    public init(target: RunTarget, observer: any RunObserver = SilentObserver(), tool: String = "azseed") {
        self.target = target
        self.observer = observer
        self.tool = tool
    }

    /// The dataset made and checked at `--now` or the clock, before the target is opened.
    /// Loading reads files and generating hashes them: on the blocking threads, not the pool.
    public func prepare(_ request: DatasetRequest) async throws -> GeneratedDataset {
        let options = request.options(blobEndpoint: target.generatedBlobEndpoint)
        let directory = request.directory
        return try await BlockingPool.run { try GeneratedDataset.make(try Dataset.load(directory: directory), options: options) }
    }

    /// A dataset made before the target is opened, or — when no `--now` was given and the
    /// clock's time gives no window with the flags (`--to` before today) — loaded and left for
    /// the target's recorded time to decide.
    enum Prepared: Sendable {
        case made(GeneratedDataset)
        case windowFromLedger(Dataset, GenerationOptions, clockError: GenerationError)
    }

    func prepareForLedger(_ request: DatasetRequest) async throws -> Prepared {
        let options = request.options(blobEndpoint: target.generatedBlobEndpoint)
        // Only a window the reference time decides can be left to the ledger: not one given
        // whole by --from and --to, and not in an embedded folder not made yet (no ledger there,
        // and opening it would create it).
        let embedded = target.embeddedDataDirectory
        let deferrable = request.now == nil && (request.from == nil || request.to == nil)
        let directory = request.directory
        return try await BlockingPool.run {
            let dataset = try Dataset.load(directory: directory)
            if deferrable, embedded.map({ FileManager.default.fileExists(atPath: $0.path) }) ?? true {
                do throws(GenerationError) {
                    _ = try ResolvedWindow.resolve(dataset.window, now: options.now, from: options.from, to: options.to)
                } catch {
                    return .windowFromLedger(dataset, options, clockError: error)
                }
            }
            return .made(try GeneratedDataset.make(dataset, options: options))
        }
    }

    /// The plan that would make the target hold the dataset; writes nothing. `digests` fills in
    /// the plan's digests (saved and JSON plans carry them). `retention`: how much of a large
    /// plan to hold (``PlanRetention``; a plan printed as text needs only what it lists).
    public func plan(_ request: DatasetRequest, prune: Bool, digests: Bool, retention: PlanRetention = .whole) async throws -> Plan {
        let prepared = try await prepareForLedger(request)
        return try await session { session in
            try await plan(prepared, request, in: session, prune: prune, digests: digests, retention: retention).plan
        }
    }

    /// Plans, tells the observer, records the apply in the target's ledger and carries the
    /// plan out. With `retention` other than whole, a large plan holds only what it lists
    /// and its entities are planned again as they are written (``SeedRun/execute(_:remaking:concurrency:onProgress:)``):
    /// memory stays flat however many entities it writes; the plan reported holds what it held.
    public func apply(_ request: DatasetRequest, prune: Bool, concurrency: Int, retention: PlanRetention = .whole) async throws
        -> AppliedPlan
    {
        let prepared = try await prepareForLedger(request)
        return try await session { session in
            // Digests always: the ledger records the desired state's.
            let (plan, reference, desired) = try await plan(prepared, request, in: session, prune: prune, digests: true, retention: retention)
            return try await execute(
                plan, reference: reference, in: session, concurrency: concurrency, clock: request.clock, remaking: plan.isWhole ? nil : desired)
        }
    }

    /// Reads a plan saved with `azseed plan --out` (its dataset regenerated from the plan's own
    /// inputs); `chosenDataset` is refused when it is not the plan's.
    public func loadSaved(_ file: String, chosenDataset: URL?) async throws -> SavedPlan {
        let endpoint = target.generatedBlobEndpoint
        return try await BlockingPool.run { try SavedPlan.load(file, chosenDataset: chosenDataset, blobEndpoint: endpoint) }
    }

    /// Carries out a saved plan, only if the plan made again now is the same (nothing written
    /// otherwise).
    /// `migrations`: the folder the plan's migrations come from (nil: the dataset's).
    public func apply(_ saved: SavedPlan, concurrency: Int, migrations folder: URL? = nil) async throws -> AppliedPlan {
        try await session { session in
            let migrations = try await appliedMigrations(
                in: folder ?? saved.desired.dataset.directory.appendingPathComponent("migrations"), in: session)
            let plan = try await session.replan(saved, migrations: migrations) { observer.reading($0) }
            return try await execute(
                plan, reference: try await session.referenceTime(of: saved), in: session, concurrency: concurrency, clock: Self.clock,
                remaking: nil)
        }
    }

    /// The drift between the target and the dataset: what `apply --prune` would change.
    /// `retention` as in ``plan(_:prune:digests:retention:)``.
    public func verify(_ request: DatasetRequest, digests: Bool, retention: PlanRetention = .whole) async throws -> (
        plan: Plan, activity: RequestActivity
    ) {
        let prepared = try await prepareForLedger(request)
        return try await session { session in
            (
                try await plan(prepared, request, in: session, prune: true, digests: digests, retention: retention).plan,
                session.run.configuration.activity
            )
        }
    }

    /// Deletes the dataset's blobs and every entity of its partitions (with `dryRun`, only
    /// plans it). Returns the plan and, when it ran, what was deleted.
    public func reset(_ request: DatasetRequest, dryRun: Bool, concurrency: Int) async throws -> (
        plan: Plan, report: ExecutionReport?, activity: RequestActivity
    ) {
        let desired = try await prepare(request)
        return try await session { session in
            let header = session.run.header(for: desired, counts: request.counts, access: request.access, prune: true)
            observer.event(.phaseBegan(.planning))
            let plan = try await session.run.resetPlan(desired.storage, header: header) { observer.reading($0) }
            observer.event(.phaseEnded(.planning))
            try await observer.planned(plan)
            var report: ExecutionReport?
            if !dryRun, !plan.isEmpty {
                observer.event(.phaseBegan(.applying))
                report = try await session.run.execute(plan, concurrency: concurrency) { observer.applying($0) }
                observer.event(.phaseEnded(.applying))
            }
            return (plan, report, session.run.configuration.activity)
        }
    }

    /// Plans `prepared` at the target's reference time for its dataset (``ReferenceTime``):
    /// `--now`, else the one the target's ledger recorded, else the clock's; the plan shows a
    /// move `--now` makes.
    func plan(
        _ prepared: Prepared, _ request: DatasetRequest, in session: StorageSession, prune: Bool,
        digests: Bool, retention: PlanRetention
    ) async throws -> (plan: Plan, reference: ReferenceTime, desired: DesiredStorage) {
        observer.event(.phaseBegan(.planning))
        var (desired, reference) =
            switch prepared {
            case .made(let made): try await session.atReferenceTime(made, requested: request.now != nil)
            case .windowFromLedger(let dataset, let options, let error):
                try await session.atRecordedTime(dataset, options: options, clockError: error)
            }
        // Every input not given is what the target's ledger recorded (seed, counts, window, not
        // only the time), said in one line; one given that differs from it is said before the plan.
        var counts = request.counts
        var reused: RecordedInputs?
        var differences: [String] = []
        if let record = reference.record {
            let recorded = RecordedInputs(record: record, request: request, made: desired)
            differences = recorded.differences
            if recorded.reusesAny {
                let options = recorded.options(desired)
                let dataset = desired.dataset
                desired = try await BlockingPool.run { try GeneratedDataset.make(dataset, options: options) }
                counts = options.counts
                reused = recorded
            }
        }
        reference.given = RecordedInputs.given(request: request, reused: reused)
        if let reused {
            observer.note(reused.note(now: reference.source == .recorded ? reference.value : nil))
        } else if let note = reference.note {
            observer.note(note)
        }
        for difference in differences { observer.note(Phrase(verbatim: difference)) }
        observer.note(
            "dataset \(Printable.escaped(desired.dataset.name)), seed \(desired.seed), window \(desired.window.from.shortISO8601) to \(desired.window.to.shortISO8601)"
        )
        // One desired state: the dataset as the migrations the target has had leave it.
        let migrations = try await appliedMigrations(in: request.migrationsFolder, in: session)
        var (plan, storage) = try await session.plan(
            desired, counts: counts, access: request.access, prune: prune, digests: digests, migrations: migrations, retention: retention
        ) { observer.reading($0) }
        plan.header.nowMove = reference.move
        observer.event(.phaseEnded(.planning))
        return (plan, reference, storage)
    }

    /// Tells the observer the plan, records the apply in the ledger before its first write (so
    /// a re-run of an interrupted apply makes the same data), and carries the plan out — for a
    /// plan not held whole, by planning its entities again from `remaking` as they are written.
    func execute(
        _ plan: Plan, reference: ReferenceTime, in session: StorageSession, concurrency: Int,
        clock: @Sendable () -> EdmDateTime, remaking: DesiredStorage?
    ) async throws -> AppliedPlan {
        try await observer.planned(plan)
        let access = try await session.recordApply(plan, reference: reference, tool: tool, appliedAt: clock())
        if case .unavailable(let why) = access, case .available = reference.ledger {
            observer.note(
                "the apply is not recorded in the target's ledger (\(why)); a later run without \(Setting.referenceTime) does not see this one")
        }
        var report = ExecutionReport()
        report.unchanged = plan.summary.unchanged
        if !plan.isEmpty {
            observer.event(.phaseBegan(.applying))
            if let remaking {
                report = try await session.run.execute(plan, remaking: remaking, concurrency: concurrency) { observer.applying($0) }
            } else {
                report = try await session.run.execute(plan, concurrency: concurrency) { observer.applying($0) }
            }
            observer.event(.phaseEnded(.applying))
        }
        return AppliedPlan(
            plan: plan, report: report, activity: session.run.configuration.activity, servingNote: session.servingNote, streamedBecause: nil)
    }

    /// Opens the target for `body` and tells the observer how it was reached.
    private func session<T>(_ body: (StorageSession) async throws -> T) async throws -> T {
        try await withSession(target, observer: observer, body)
    }

    /// This process's clock, to the second.
    static let clock: @Sendable () -> EdmDateTime = { EdmDateTime(unixSeconds: Int64(Date().timeIntervalSince1970)) }
}
