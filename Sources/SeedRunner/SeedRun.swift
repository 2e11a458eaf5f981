import AzureStorage
import Foundation
import SeedKit

/// One storage command's work against one target: observe, plan, execute, and the checks
/// a saved plan must pass before it runs.
public struct SeedRun: Sendable {
    public let target: PlanTarget
    public let blobs: BlobClient
    public let tables: TableClient
    /// The part of the work this run does (`--shard I/N`); nil does all of it.
    public let shard: Shard?
    /// The clients' configuration: their request log and activity counts.
    public let configuration: ClientConfiguration

    public init(
        account: StorageAccount, target: PlanTarget, transport: (any HTTPTransport)? = nil,
        configuration: ClientConfiguration = ClientConfiguration(), shard: Shard? = nil
    ) {
        self.target = target
        self.configuration = configuration
        self.shard = shard.flatMap { $0.count > 1 ? $0 : nil }
        blobs = BlobClient(account: account, transport: transport, configuration: configuration)
        tables = TableClient(account: account, transport: transport, configuration: configuration)
    }

    /// The header of a plan for `desired` against this target.
    public func header(for desired: GeneratedDataset, counts: [String: Int], access: PublicAccess?, prune: Bool) -> PlanHeader {
        PlanHeader(
            target: target, source: .dataset, dataset: desired.dataset.name, datasetDirectory: desired.dataset.directory.standardizedFileURL.path,
            seed: desired.seed, window: desired.window, counts: counts, access: access, prune: prune
        ).with(now: desired.options.now)
    }

    /// Observes the target and plans the way to `desired`; `digests` and `retention` as in
    /// ``Planner``. Entities are read page by page and merged with the desired ones, so memory
    /// does not grow with the table. A service that lists keys in another order than their
    /// bytes (``ObservedOrderError``) is read again whole and planned from memory, whole.
    public func plan(
        _ desired: DesiredStorage, header: PlanHeader, digests: Bool = true, retention: PlanRetention = .whole,
        onRead: (@Sendable (Int) -> Void)? = nil
    ) async throws -> Plan {
        if let shard { try await checkShardable(desired, shard: shard) }
        let desired = shard.map { desired.sharded($0) } ?? desired
        var header = header
        header.shard = shard
        let observer = Observer(blobs: blobs, tables: tables, shard: shard)
        let observed = try await observer.observeStorage(desired)
        do {
            return try await Planner.plan(
                desired: desired, observed: observed, entities: observer.entities(onRead: onRead), header: header, digests: digests,
                retention: retention)
        } catch is ObservedOrderError {
            let whole = try await observer.observe(desired, onEntities: onRead)
            return try await Planner.plan(desired: desired, observed: whole, header: header, digests: digests)
        }
    }

    /// Refuses a sharded plan where natural-key recognition would need two shards: an entity
    /// in a kind's partitions under a RowKey the dataset does not make (seeded by another tool,
    /// or not in the dataset) may be the twin of a dataset entity that hashes to another shard,
    /// which would then create a duplicate. Every shard reads the same RowKeys and refuses
    /// alike. Snapshots (no natural keys) are not affected.
    func checkShardable(_ desired: DesiredStorage, shard: Shard) async throws {
        for group in desired.groups where !group.key.isEmpty {
            let known = try group.unshardedRowKeys()
            guard try await tables.tableExists(group.table) else { continue }
            for partition in group.partitions {
                let keys = known[ExactString(partition)] ?? []
                do {
                    for try await page in tables.query(group.table, filter: .partition(partition), select: ["PartitionKey", "RowKey"]) {
                        if let foreign = page.first(where: { !keys.contains(ExactString($0.entity.rowKey)) }) {
                            throw RunError(
                                "shard \(shard): table \(group.table), partition '\(partition)' holds an entity under a RowKey the dataset does not make (\(foreign.entity.rowKey)); natural-key recognition needs the whole partition, so run this plan once without \(Setting.shard) (with \(Setting.prune) to remove entities not in the dataset)"
                            )
                        }
                    }
                } catch let error as RunError {
                    throw error
                } catch {
                    throw RunError.explaining(error, while: "reading the target")
                }
            }
        }
    }

    /// Observes the target and plans deleting what the dataset owns.
    public func resetPlan(_ desired: DesiredStorage, header: PlanHeader, onRead: (@Sendable (Int) -> Void)? = nil) async throws -> Plan {
        let desired = shard.map { desired.sharded($0) } ?? desired
        var header = header
        header.shard = shard
        let observed = try await Observer(blobs: blobs, tables: tables, shard: shard).observe(desired, onEntities: onRead)
        return Planner.resetPlan(desired: desired, observed: observed, header: header)
    }

    /// Carries out `plan`; `copier` reads the blobs a copy plan takes from a source account.
    public func execute(_ plan: Plan, concurrency: Int, copier: BlobCopier? = nil, onProgress: (@Sendable (ExecutionProgress) -> Void)? = nil)
        async throws -> ExecutionReport
    {
        try await Executor(blobs: blobs, tables: tables, concurrency: concurrency, copier: copier, onProgress: onProgress).execute(plan)
    }

    /// Carries out a plan that counted entity actions it does not hold (``Plan/isWhole``
    /// false): its entities are planned again from `desired` — the state it was planned from —
    /// and written as they are made, each checked against the action the plan counted.
    /// Package-only: `desired` must be exactly what the plan was made from (the dataset as
    /// the target's migrations leave it), which ``Seeder/apply(_:prune:concurrency:retention:)`` keeps.
    package func execute(
        _ plan: Plan, remaking desired: DesiredStorage, concurrency: Int, onProgress: (@Sendable (ExecutionProgress) -> Void)? = nil
    ) async throws -> ExecutionReport {
        let desired = shard.map { desired.sharded($0) } ?? desired
        let source = Observer(blobs: blobs, tables: tables, shard: shard).entities()
        do {
            return try await Executor(blobs: blobs, tables: tables, concurrency: concurrency, onProgress: onProgress).execute(plan) { emit in
                _ = try await Planner.remakeEntities(desired: desired, entities: source, prune: plan.header.prune, emit: emit)
            }
        } catch let error as ObservedOrderError {
            // The first pass read in byte order (else it would have held the plan whole); the
            // second met keys out of it, which a streaming write cannot be sure of.
            throw RunError(
                "\(error); the service listed keys out of byte order while this apply wrote, so it stopped (batches before were written). Run again: the next plan reads such a table whole"
            )
        }
    }

    /// Refuses a saved plan made against another target.
    public func checkTarget(of saved: PlanHeader, file: String) throws(RunError) {
        guard saved.target == target else {
            throw RunError(
                "\(file): the plan was made for \(saved.target.displayName), not \(target.displayName); make a plan for this target with \(Setting.savePlan)"
            )
        }
    }

    /// Refuses a saved plan when the plan made again now differs: the dataset files or the
    /// target changed since it was saved.
    public static func checkUnchanged(saved: PlanHeader, fresh: Plan, file: String) throws(RunError) {
        if saved.desiredDigest != fresh.header.desiredDigest {
            throw RunError(
                "\(file): the dataset files in \(saved.datasetDirectory) changed since the plan was made; make a new plan with \(Setting.savePlan)"
            )
        }
        if saved.observedDigest != fresh.header.observedDigest {
            throw RunError(
                "\(file): \(fresh.header.target.displayName) changed since the plan was made; nothing was written. Review the changes with \(Setting.planCommand) and save a new plan"
            )
        }
    }
}
