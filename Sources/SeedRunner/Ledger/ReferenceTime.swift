import AzureStorage
import Foundation
import SeedKit

/// The reference time ("now") a run resolved a dataset's relative window from, and where
/// it came from. Without `--now`, a target that recorded an apply of the dataset keeps
/// that apply's reference time, so a run on another day makes the same data.
public struct ReferenceTime: Sendable {
    public enum Source: Sendable, Equatable {
        /// `--now` (or `--now today`).
        case requested
        /// The ledger's record of the dataset's latest apply.
        case recorded
        /// This run's clock: no record and no `--now`.
        case clock
    }

    public var value: EdmDateTime
    public var source: Source
    /// The window `value` gives the dataset (set by ``StorageSession/atReferenceTime(_:requested:)``).
    public var window: ResolvedWindow?
    /// The ledger's record of the dataset, when there is one.
    public var record: ApplyRecord?
    /// Whether the ledger could be read.
    public var ledger: Ledger.Access
    /// The damaged record `--now` replaces, when there was one.
    public var replaces: LedgerRecordDamaged? = nil
    /// The generation inputs this run has from flags, given or taken from the record
    /// (``ApplyRecord/given``); nil when unknown (a saved plan).
    public var given: Set<String>? = nil

    /// The move `--now` makes away from the recorded reference time; nil when it makes none,
    /// or when the window it gives is the recorded one (the data cannot differ).
    public var move: NowMove? {
        guard source == .requested, let record, record.now != value, let window, window != record.window else { return nil }
        return NowMove(from: record.now, fromWindow: record.window, to: value, recordedAt: record.appliedAt)
    }

    /// One line for stderr on where the reference time came from; nil when it is this run's
    /// clock or `--now` and there was nothing to say about the ledger (the plan shows a move).
    public var note: Phrase? {
        switch (source, ledger) {
        case (.recorded, _):
            return
                "now \(value.shortISO8601), as recorded by the apply of \(record!.appliedAt.shortISO8601) in the target's ledger (\(Setting.referenceTimeToday) moves it)"
        case (.requested, _) where replaces != nil:
            return "\(replaces!); \(Setting.referenceTime) is used instead"
        case (_, .unavailable(let why)):
            return
                "the target's ledger cannot be read (\(why)): the reference time is \(source == .requested ? "\(Setting.referenceTime)'s" as Phrase : "this run's clock"), and a run on another day may plan other data"
        default:
            return nil
        }
    }
}

extension StorageSession {
    /// The target's ledger.
    public var ledger: Ledger { Ledger(tables: run.tables) }

    /// `prepared` (made, and so checked, before the target was opened, at `--now` or the
    /// clock) at this target's reference time for its dataset: `--now` when `requested`,
    /// else the time the ledger recorded for the dataset's latest apply, else `prepared`'s own.
    public func atReferenceTime(_ prepared: GeneratedDataset, requested: Bool) async throws -> (GeneratedDataset, ReferenceTime) {
        let (record, access, damage) = try await readRecord(dataset: prepared.dataset.name, requested: requested)
        if !requested, let record {
            // Made again only if the window moves: generating reads files, on the blocking threads.
            let desired = try await Self.make(record: record) { try prepared.at(now: record.now) }
            return (desired, ReferenceTime(value: record.now, source: .recorded, window: desired.window, record: record, ledger: access))
        }
        return (
            prepared,
            ReferenceTime(
                value: prepared.options.now, source: requested ? .requested : .clock, window: prepared.window, record: record,
                ledger: access, replaces: damage)
        )
    }

    /// `dataset` at the reference time its record holds, for a dataset whose window the
    /// clock could not resolve with the flags given (`--to` before today, say): the recorded
    /// time decides, as it would have. Throws `clockError` when there is no record.
    public func atRecordedTime(_ dataset: Dataset, options: GenerationOptions, clockError: Error) async throws -> (GeneratedDataset, ReferenceTime) {
        let (record, access, _) = try await readRecord(dataset: dataset.name, requested: false)
        guard let record else { throw clockError }
        var options = options
        options.now = record.now
        // With --from or --to given, a window the recorded time cannot make is the flags' fault.
        let flagsGiven = options.from != nil || options.to != nil
        let desired = try await Self.make(record: record, flagsGiven: flagsGiven) { [options] in try GeneratedDataset.make(dataset, options: options)
        }
        return (desired, ReferenceTime(value: record.now, source: .recorded, window: desired.window, record: record, ledger: access))
    }

    /// The ledger's record after a reachability check (the ledger is a run's first request:
    /// an endpoint that does not answer is named here). A damaged record is refused, unless
    /// `--now` was given: then it is reported, and replaced by the apply.
    private func readRecord(dataset: String, requested: Bool) async throws -> (ApplyRecord?, Ledger.Access, LedgerRecordDamaged?) {
        try await Reachability.check(
            [run.blobs.account.blobEndpoint, run.tables.account.tableEndpoint], trustedCertificates: run.blobs.configuration.trustedCertificates)
        do {
            let (record, access) = try await ledger.applyRecord(dataset: dataset)
            return (record, access, nil)
        } catch let damaged as LedgerRecordDamaged where requested {
            return (nil, .available, damaged)
        }
    }

    /// Generates on the blocking threads; a recorded time whose window is impossible (out of
    /// Edm.DateTime's range) is a damaged record, not a usage error of flags never given.
    private static func make(record: ApplyRecord, flagsGiven: Bool = false, _ body: @escaping @Sendable () throws -> GeneratedDataset) async throws
        -> GeneratedDataset
    {
        do {
            return try await BlockingPool.run(body)
        } catch let error as GenerationError where error.isUsage && !flagsGiven {
            throw LedgerRecordDamaged(
                rowKey: ApplyRecord.rowKey(dataset: record.dataset),
                problem: "its Now \(record.now.shortISO8601) gives no window: \(error.message)")
        }
    }

    /// A saved plan's reference time (its own, as `--now` is), beside the ledger's record.
    public func referenceTime(of saved: SavedPlan) async throws -> ReferenceTime {
        let (record, access, damage) = try await readRecord(dataset: saved.header.dataset, requested: true)
        return ReferenceTime(
            value: saved.desired.options.now, source: .requested, window: saved.desired.window, record: record, ledger: access,
            replaces: damage)
    }

    /// Records in the ledger that `plan` (of a dataset) is being applied at `reference`,
    /// before the first write of the apply, so an interrupted apply run again makes the same
    /// data. A record of the same inputs is left as it is: an apply that changes nothing
    /// writes nothing. `tool` names this program; `appliedAt` is the clock's time.
    @discardableResult
    public func recordApply(_ plan: Plan, reference: ReferenceTime, tool: String, appliedAt: EdmDateTime) async throws -> Ledger.Access {
        guard plan.header.source == .dataset, let seed = plan.header.seed, let window = plan.header.window else { return .available }
        // A shard's digest is of its part only: a sharded apply keeps the whole one recorded
        // (so shards applying in turn do not rewrite the record over and over).
        let digest = run.shard == nil ? plan.header.desiredDigest : reference.record?.desiredDigest ?? ""
        let record = ApplyRecord(
            dataset: plan.header.dataset, desiredDigest: digest, seed: seed, now: reference.value, window: window,
            counts: plan.header.counts, shard: run.shard, tool: tool, appliedAt: appliedAt, given: reference.given)
        if case .unavailable = reference.ledger { return reference.ledger }
        if plan.isEmpty, let recorded = reference.record, recorded.sameInputs(as: record) { return .available }
        return try await ledger.write(record)
    }
}
