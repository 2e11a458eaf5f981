import AzureStorage
import Foundation
import SeedKit
import Synchronization

/// What an apply did.
public struct ExecutionReport: Sendable {
    public var created = 0, updated = 0, deleted = 0, unchanged = 0
    /// Entities written or deleted.
    public var entityOperations = 0
    public var seconds = 0.0
    /// Blob bytes this process sent (uploads, and copies streamed through it).
    public var blobBytesSent = 0
    /// Blob bytes the target read from the source itself (server-side copies).
    public var blobBytesCopiedServerSide = 0
    /// Each phase (blobs, then each kind or table, then deletes) with its time, in order.
    public var phases: [PhaseTiming] = []

    public init() {}

    /// The phase that took longest, if any ran.
    public var slowestPhase: PhaseTiming? { phases.max { $0.seconds < $1.seconds } }
}

/// Carries out a plan: containers, then blobs (concurrently), then tables, then entities
/// kind by kind (referenced kinds first) in concurrent entity group transactions, then
/// deletes. Every step is idempotent, so running a plan again after an interruption
/// converges without a journal.
public struct Executor: Sendable {
    public let blobs: BlobClient
    public let tables: TableClient
    /// Requests in flight at most.
    public let concurrency: Int
    public let onProgress: (@Sendable (ExecutionProgress) -> Void)?
    /// Where blobs of a source account come from (`azseed copy`).
    public let copier: BlobCopier?
    private let sent = BlobByteCount()

    public init(
        blobs: BlobClient, tables: TableClient, concurrency: Int = 8, copier: BlobCopier? = nil,
        onProgress: (@Sendable (ExecutionProgress) -> Void)? = nil
    ) {
        self.blobs = blobs
        self.tables = tables
        self.concurrency = max(1, concurrency)
        self.copier = copier
        self.onProgress = onProgress
    }

    /// Carries out a whole plan (``Plan/isWhole``).
    public func execute(_ plan: Plan) async throws -> ExecutionReport {
        guard plan.isWhole else {
            throw RunError(
                "this plan counts entity actions it does not hold (made with PlanRetention.text, to print), so it cannot be carried out as it is; plan with PlanRetention.whole, or apply through Seeder.apply, which plans the entities again as it writes them"
            )
        }
        let started = Date()
        let summary = plan.summary
        let blobWork = plan.blobs.filter { $0.change != .unchanged }
        let entityWork = plan.entities.filter { $0.change != .unchanged } + plan.entityDeletes
        let counter = progressCounter(plan, blobWork: blobWork, entities: entityWork.count)
        try await executeStorage(plan, blobWork: blobWork, counter: counter)
        // Kind by kind, so a referenced entity (a speaker) exists before what points at it;
        // deletes last.
        var groups: [[EntityAction]] = []
        for action in entityWork {
            if let first = groups.last?.first, PhaseKey(first) == PhaseKey(action) {
                groups[groups.count - 1].append(action)
            } else {
                groups.append([action])
            }
        }
        let checked = plan.entitiesChecked
        for actions in groups {
            let table = actions[0].table
            counter.begin(phase: PhaseKey(actions[0]).name, items: actions.count)
            try await forEachConcurrently(EntityBatches.make(actions), limit: concurrency) { batch in
                try await submit(batch, to: table, checked: checked)
                counter.add(batch.count, bytes: 0)
            }
            counter.end()
        }
        return finished(summary, entityOperations: entityWork.count, counter: counter, started: started)
    }

    /// Carries out a plan that counted entity actions it does not hold (``PlanRetention``):
    /// its containers, blobs and tables as it holds them, then its entity actions as `remake`
    /// makes them again — planned against the target anew and written as they come, so
    /// memory holds a few batches, not the plan. Each remade action must be the one the plan
    /// counted in its place (``ActionFingerprints``: the same change, keys and ETag read):
    /// another client's write since the plan stops the run there, theirs kept.
    package func execute(
        _ plan: Plan, remaking remake: (_ emit: (MergeOutput) async throws -> Void) async throws -> Void
    ) async throws -> ExecutionReport {
        let started = Date()
        let blobWork = plan.blobs.filter { $0.change != .unchanged }
        let entityWork =
            plan.entities.count { $0.change != .unchanged } + plan.entityDeletes.count + plan.countedEntities.reduce(0) { $0 + $1.count }
        let counter = progressCounter(plan, blobWork: blobWork, entities: entityWork)
        try await executeStorage(plan, blobWork: blobWork, counter: counter)
        var writes = RemadeWrites(plan: plan, executor: self, counter: counter)
        try await withThrowingTaskGroup(of: Int.self) { group in
            try await remake { output in
                switch output {
                case .action(let action), .delete(let action): try await writes.take(action, group: &group)
                case .resolved(let actions): for action in actions { try await writes.take(action, group: &group) }
                case .kindEnded: try await writes.finishKind(group: &group)
                }
            }
            try await writes.finish(group: &group)
        }
        return finished(writes.written, entityOperations: writes.operations, counter: counter, started: started)
    }

    private func progressCounter(_ plan: Plan, blobWork: [BlobAction], entities: Int) -> ProgressCounter {
        let blobBytes = blobWork.reduce(0) { $0 + ($1.change == .delete ? 0 : $1.blob?.size ?? 0) }
        return ProgressCounter(total: blobWork.count + entities, bytesTotal: blobBytes, report: onProgress)
    }

    /// Containers, then blobs (concurrently), then tables.
    private func executeStorage(_ plan: Plan, blobWork: [BlobAction], counter: ProgressCounter) async throws {
        for container in plan.containers where container.change != .unchanged {
            try await apply(container)
        }
        if !blobWork.isEmpty {
            counter.begin(phase: "blobs", items: blobWork.count)
            try await forEachConcurrently(blobWork, limit: concurrency) { action in
                try await apply(action)
                counter.add(1, bytes: action.change == .delete ? 0 : action.blob?.size ?? 0)
            }
            counter.end()
        }
        for table in plan.tables where table.change == .create {
            do { try await tables.ensureTable(table.name) } catch { throw RunError.explaining(error, while: "creating table '\(table.name)'") }
        }
    }

    private func finished(_ summary: PlanSummary, entityOperations: Int, counter: ProgressCounter, started: Date) -> ExecutionReport {
        var report = ExecutionReport()
        report.unchanged = summary.unchanged
        report.created = summary.create
        report.updated = summary.update
        report.deleted = summary.delete
        report.entityOperations = entityOperations
        report.blobBytesSent = sent.value + (copier?.streamedBytes ?? 0)
        report.blobBytesCopiedServerSide = copier?.serverSideBytes ?? 0
        report.phases = counter.phases
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    private func apply(_ container: ContainerAction) async throws {
        let doing = container.change == .create ? "creating container '\(container.name)'" : "setting the access of container '\(container.name)'"
        do {
            var created = false
            if container.change == .create {
                do {
                    try await blobs.createContainer(container.name, access: container.access)
                    created = true
                } catch let error as AzureStorageError where error.code == .containerAlreadyExists {
                    // Made since the plan (or by a retried create): set the access it must have.
                }
            }
            if !created && (container.change == .create || container.currentAccess != nil) {
                try await blobs.setContainerAccess(container.name, access: container.access)
            }
            if let metadata = container.metadata { try await blobs.setContainerMetadata(container.name, metadata: metadata) }
        } catch let error as AzureStorageError where error.code == .publicAccessNotPermitted {
            throw RunError(
                "\(doing): the account does not permit public access (409 PublicAccessNotPermitted), so access '\(container.access.rawValue)' cannot be set; nothing else was written. Rerun with \(Setting.privateAccess) (anonymous image URLs will not work) or allow blob public access on the storage account"
            )
        } catch {
            throw RunError.explaining(error, while: doing)
        }
    }

    private func apply(_ action: BlobAction) async throws {
        do {
            if action.change == .delete {
                do {
                    // Only the blob the plan saw: one written since is someone else's.
                    if let etag = action.currentETag {
                        try await blobs.deleteBlob(container: action.container, name: action.name, etag: etag)
                    } else {
                        try await blobs.deleteBlob(container: action.container, name: action.name)
                    }
                } catch let error as AzureStorageError where error.status == 404 {
                    // Already gone (a retried delete that had succeeded): the goal is met.
                } catch let error as AzureStorageError where error.status == 412 {
                    throw Self.blobChangedSincePlanned(action.container, action.name)
                }
                return
            }
            guard let blob = action.blob else { return }
            let tier = blob.stored?.accessTier
            if action.reasons == ["tier"], let tier {
                // Only the tier differs: set it, the bytes stay.
                try await blobs.setTier(container: action.container, name: action.name, tier: tier)
                return
            }
            // A new blob only where none is; an update only over the blob the plan saw.
            let ifAbsent = action.change == .create
            let ifMatch = action.change == .update ? action.currentETag : nil
            do {
                switch blob.content {
                case .file(let file):
                    var options = blob.uploadOptions
                    options.onlyIfAbsent = ifAbsent
                    options.ifMatch = ifMatch
                    try await blobs.upload(file: file, container: action.container, name: action.name, options: options)
                    sent.add(blob.size)
                case .sourceBlob(let container, let name, let listed):
                    guard let copier else {
                        throw RunError("blob '\(action.container)/\(action.name)' is to be copied from a source account, and none is open")
                    }
                    try await copier.copy(
                        container: container, name: name, listed: listed, to: blobs, as: action.container, action.name, blob: blob,
                        ifAbsent: ifAbsent,
                        ifMatch: ifMatch)
                }
            } catch let error as AzureStorageError where error.status == 409 || error.status == 412 {
                // This run's own earlier attempt (a retried request) left the same bytes: done.
                // The bytes are read and hashed: a Content-MD5 property proves nothing.
                let there = try await blobs.properties(container: action.container, name: action.name)
                guard let there, there.contentLength == blob.size, !blob.md5.isEmpty,
                    try await StoredBytes.md5(blobs, container: action.container, name: action.name) == blob.md5
                else {
                    throw Self.blobChangedSincePlanned(action.container, action.name)
                }
            }
            // A written blob takes the account's default tier (Hot, unless the account says
            // otherwise); any other the source held is set after.
            if let tier, tier.lowercased() != "hot" {
                try await blobs.setTier(container: action.container, name: action.name, tier: tier)
            }
        } catch let error as RunError {
            throw error
        } catch {
            let doing =
                action.change == .delete
                ? "deleting" : action.reasons == ["tier"] ? "setting the access tier of" : action.blob?.file == nil ? "copying" : "uploading"
            throw RunError.explaining(error, while: "\(doing) blob '\(action.container)/\(action.name)'")
        }
    }

    /// Submits one batch, reconciling what a retried request finds: an insert met by an
    /// entity already there (409), or an update met by another ETag (412), is dropped when the
    /// entity holds exactly what this run writes (an earlier attempt was applied); a delete
    /// whose earlier attempt was applied (404) is dropped. Anything else there is someone
    /// else's write since the plan: the batch is not written and the run stops, theirs kept.
    func submit(_ batch: [TableBatchOperation], to table: String, checked: Bool) async throws {
        var ops = batch
        while !ops.isEmpty {
            do {
                _ = try await tables.submit(ops, to: table, entitiesChecked: checked)
                return
            } catch let error as AzureStorageError where error.failedOperation != nil {
                guard let index = error.failedOperation?.index, index < ops.count else {
                    throw RunError.explaining(error, while: "writing to table '\(table)'")
                }
                switch ops[index] {
                case .insert(let entity) where error.code == .entityAlreadyExists:
                    try await dropIfWritten(entity, at: index, from: &ops, table: table)
                case .update(let entity, _) where error.status == 412:
                    try await dropIfWritten(entity, at: index, from: &ops, table: table)
                case .delete where error.status == 404:
                    ops.remove(at: index)
                case .delete(let partitionKey, let rowKey, _) where error.status == 412:
                    throw Self.changedSincePlanned(table: table, partitionKey: partitionKey, rowKey: rowKey)
                default:
                    throw RunError.explaining(error, while: "writing to table '\(table)'")
                }
            } catch let error as RunError {
                throw error
            } catch {
                throw RunError.explaining(error, while: "writing to table '\(table)'")
            }
        }
    }

    /// Drops `ops[index]` when the entity there now is exactly `entity` (this run's earlier
    /// attempt, or the same values); otherwise someone else wrote it since the plan.
    private func dropIfWritten(_ entity: TableEntity, at index: Int, from ops: inout [TableBatchOperation], table: String) async throws {
        let there = try await tables.get(partitionKey: entity.partitionKey, rowKey: entity.rowKey, from: table)
        guard there?.entity == entity else {
            throw Self.changedSincePlanned(table: table, partitionKey: entity.partitionKey, rowKey: entity.rowKey)
        }
        ops.remove(at: index)
    }

    /// The line of a run that met another writer's entity: nothing of theirs was replaced.
    static func changedSincePlanned(table: String, partitionKey: String, rowKey: String) -> RunError {
        RunError(
            "table '\(table)', entity (PartitionKey '\(Printable.escaped(partitionKey, quotes: false))', RowKey '\(Printable.escaped(rowKey, quotes: false))') was written by someone else after the plan read it; it was kept as they wrote it, and its batch was not written. Run again: the next plan starts from what is there now"
        )
    }

    /// The line of a run that met another writer's blob.
    static func blobChangedSincePlanned(_ container: String, _ name: String) -> RunError {
        RunError(
            "blob '\(container)/\(Printable.escaped(name, quotes: false))' was written by someone else after the plan read it; it was kept as they wrote it. Run again: the next plan starts from what is there now"
        )
    }
}
