import AzureStorage
import Foundation
import SeedKit

/// `migrate plan`'s dry run: each operation counted against the target as the operations
/// before it would leave it. Tables created or deleted are tracked by name; an entity
/// operation reads its table and runs every earlier entity step on that table over each
/// entity first, in memory. Writes nothing.
struct MigrationSimulation {
    let tables: TableClient
    let blobs: BlobClient
    let observer: any RunObserver
    /// The part a sharded plan counts (`--shard I/N`): entity and blob steps come sharded; a
    /// copy-table counts the shard's partitions.
    var shard: Shard? = nil
    /// Tables that would exist, by their lowercased name (Azure's table names ignore case),
    /// and whether the target holds them now (else their entities are none).
    private var exists: [String: Bool]
    /// Entity steps earlier in the plan, per table.
    private var earlier: [String: [EntityStep]] = [:]
    /// Tables a copy-table of the plan fills, the table it copies, and the steps that table
    /// had had by then.
    private var copiedFrom: [String: String] = [:]
    private var copiedSteps: [String: [EntityStep]] = [:]
    /// What earlier blob steps of the plan would have done, per container: blobs gone, and blobs
    /// added or changed (by name).
    private var blobOverlay: [String: (removed: Set<String>, changed: [String: BlobProperties])] = [:]

    init(tables: TableClient, blobs: BlobClient, observer: any RunObserver) async throws {
        self.tables = tables
        self.blobs = blobs
        self.observer = observer
        var exists: [String: Bool] = [:]
        do {
            for name in try await tables.listTables() { exists[name.lowercased()] = true }
        } catch {
            throw RunError.explaining(error, while: "listing the target's tables")
        }
        self.exists = exists
    }

    mutating func plan(_ entry: MigrationStatus.Entry) async throws -> MigrationReport {
        let migration = entry.migration!
        let resumeAt = entry.state == .running ? (entry.record?.checkpoint?.operation ?? 0) : 0
        var report = MigrationReport(version: migration.version.text, description: migration.description, state: entry.state.rawValue, operations: [])
        report.undoBlocker = migration.firstNotInvertible.map { "\($0.operation.name) on \($0.operation.table)" }
        for (i, operation) in migration.operations.enumerated() {
            var counted = OperationReport(op: operation.name, table: operation.table)
            counted.isBlobOperation = operation.isBlobOperation
            let key = operation.table.lowercased()
            if i < resumeAt {
                counted.done = true
                counted.changes = entry.record?.counts[safe: i] ?? 0
                report.operations.append(counted)
                if case .entities(let step) = operation { earlier[key, default: []].append(try await prepared(step)) }
                continue
            }
            switch operation {
            case .copyTable(let from, let to):
                guard let held = exists[from.lowercased()] else {
                    throw RunError(
                        "migration \(migration.version.text), operation \(i + 1) (copy-table): table \(from) does not exist, and no operation before it creates it; name the right table"
                    )
                }
                // Every entity of `from`, as the earlier steps would leave it (a delete-entities
                // step leaves fewer); `to` then holds them, for the steps after.
                if held || copiedFrom[from.lowercased()] != nil {
                    var copied = 0
                    let shard = self.shard
                    try await visit(from, filter: nil) { entity in if shard?.owns(partition: entity.partitionKey) ?? true { copied += 1 } }
                    counted.changes = copied
                }
                if exists[to.lowercased()] == nil { exists[to.lowercased()] = false }
                // `to` now holds `from` as the steps so far leave it; its own steps start afresh.
                copiedFrom[to.lowercased()] = copiedFrom[from.lowercased()] ?? from.lowercased()
                copiedSteps[to.lowercased()] = (copiedSteps[from.lowercased()] ?? []) + (earlier[from.lowercased()] ?? [])
                earlier[to.lowercased()] = []
            case .createTable:
                if exists[key] == nil {
                    counted.changes = 1
                    exists[key] = false
                }
            case .deleteTable:
                if exists[key] != nil {
                    counted.changes = 1
                    exists[key] = nil
                    earlier[key] = []
                    copiedFrom[key] = nil
                    copiedSteps[key] = nil
                }
            case .entities(let fileStep):
                guard let held = exists[key] else {
                    throw RunError(
                        "migration \(migration.version.text), operation \(i + 1) (\(fileStep.change.name)): table \(fileStep.table) does not exist, and no operation before it creates it; name the right table or add create-table"
                    )
                }
                let step = try await prepared(fileStep)
                if held || copiedFrom[key] != nil { try await count(step, into: &counted) }
                earlier[key, default: []].append(step)
            case .blobs(let step):
                let run = BlobStepRun(blobs: blobs, step: step, account: blobs.account) {}
                for blob in try await currentBlobs(run) where run.changes(blob) {
                    if case .move(let to, _) = step.change, let conflict = try await conflict(moving: blob, to: to, run) {
                        // apply refuses the step whole before its first write: counted as a failure.
                        counted.failures += 1
                        if counted.firstFailure == nil { counted.firstFailure = conflict }
                    }
                    counted.changes += 1
                    if case .delete = step.change { counted.deleted += 1 }
                    if counted.samples.count < OperationReport.maxSamples {
                        counted.samples.append(EntityDiff(blob: blob.name, line: run.describe(blob)))
                    }
                    simulate(step, on: blob)
                }
            }
            report.operations.append(counted)
        }
        return report
    }

    /// The blobs a step would see: the container's listing with the earlier steps' overlay (a
    /// container an earlier move makes is empty until then).
    private func currentBlobs(_ run: BlobStepRun) async throws -> [BlobProperties] {
        let overlay = blobOverlay[run.step.container]
        var listed: [BlobProperties] = []
        do {
            listed = try await run.listed()
        } catch let error as RunError where overlay != nil && error.phrase.description.contains("does not exist") {
        }
        var byName: [String: BlobProperties] = [:]
        for blob in listed where !(overlay?.removed.contains(blob.name) ?? false) { byName[blob.name] = blob }
        for (name, blob) in overlay?.changed ?? [:] where run.step.selects(name) { byName[name] = blob }
        return byName.values.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// Why a move cannot write `blob` to container `to`: its destination, as the plan's earlier
    /// steps leave it, holds another blob (apply never replaces one); nil when it is free or
    /// holds this blob's copy already (a stopped move).
    private func conflict(moving blob: BlobProperties, to container: String, _ run: BlobStepRun) async throws -> String? {
        let name = run.destination(of: blob.name)
        let there: BlobProperties?
        if blobOverlay[container]?.removed.contains(name) == true {
            there = nil
        } else if let changed = blobOverlay[container]?.changed[name] {
            there = changed
        } else {
            there = try await blobs.properties(container: container, name: name)
        }
        guard let there else { return nil }
        // This move's own copy only when its bytes are the source's (read and hashed; an
        // overlay blob is one this plan moved there).
        if there.sameStoredBlob(as: blob) {
            if blobOverlay[container]?.changed[name] != nil { return nil }
            let ours = try await StoredBytes.md5(blobs, container: container, name: name)
            if try await ours == StoredBytes.md5(blobs, container: run.step.container, name: blob.name) { return nil }
        }
        return
            "\(container)/\(Printable.escaped(name, quotes: false)) already holds other bytes, which apply never replaces (move or delete it, or move to another prefix)"
    }

    /// Records in the overlay what a blob step does to one blob.
    private mutating func simulate(_ step: BlobStep, on blob: BlobProperties) {
        switch step.change {
        case .move(let container, let prefix):
            blobOverlay[step.container, default: ([], [:])].removed.insert(blob.name)
            blobOverlay[step.container]?.changed[blob.name] = nil
            var moved = blob
            moved.name = prefix + String(decoding: blob.name.utf8.dropFirst(step.prefix.utf8.count), as: UTF8.self)
            blobOverlay[container, default: ([], [:])].changed[moved.name] = moved
            blobOverlay[container]?.removed.remove(moved.name)
        case .setProperties(let contentType, let cacheControl, let metadata):
            var changed = blob
            if let contentType { changed.contentType = contentType }
            if let cacheControl { changed.cacheControl = cacheControl }
            changed.metadata.merge(metadata) { $1 }
            blobOverlay[step.container, default: ([], [:])].changed[blob.name] = changed
        case .delete:
            blobOverlay[step.container, default: ([], [:])].removed.insert(blob.name)
            blobOverlay[step.container]?.changed[blob.name] = nil
        }
    }

    /// Reads the table (only what `where:` selects when no earlier step changes it) and counts
    /// what the step would change. A table a copy-table of the plan fills is read from the table
    /// it copies, through that table's earlier steps, then its own.
    private func count(_ step: EntityStep, into counted: inout OperationReport) async throws {
        var selected = 0
        try await visit(step.table, filter: step) { entity in
            guard step.selects(entity) else { return }
            selected += 1
            let outcome = step.change.apply(to: entity)
            switch outcome {
            case .unchanged:
                if step.change.skips(entity) { counted.skipped += 1 }
                return
            case .failed(let why):
                counted.failures += 1
                if counted.firstFailure == nil { counted.firstFailure = "entity (\(EntityStepRun.shown(entity))): \(why)" }
            case .replaced, .deleted, .rekeyed:
                counted.changes += 1
                if case .deleted = outcome { counted.deleted += 1 }
                if counted.samples.count < OperationReport.maxSamples { counted.samples.append(EntityDiff(before: entity, outcome: outcome)) }
            }
        }
        if selected == 0, let text = step.filterText { counted.warning = try await noSelection(step, text: text) }
    }

    /// Why a `where:` selects no entity, said in one line: from the types a few hundred of the
    /// table's entities hold (as the earlier steps leave them), what in the filter cannot match.
    private func noSelection(_ step: EntityStep, text: String) async throws -> String {
        var seen: [String: Set<EdmType>] = [:]
        var read = 0
        try await visit(step.table, filter: nil, limit: 500) { entity in
            read += 1
            seen["PartitionKey", default: []].insert(.string)
            seen["RowKey", default: []].insert(.string)
            for (name, value) in entity.properties { seen[name, default: []].insert(value.type) }
        }
        let hints = step.selectionHints(seen: seen)
        let head = "where: \"\(Printable.escaped(text, quotes: false))\" selects no entity of table \(step.table)"
        if read == 0 { return head + " (it holds none)" }
        return head + (hints.isEmpty ? "" : ": " + hints.joined(separator: "; "))
    }

    /// Every entity of `table` as the plan's earlier steps would leave it.
    /// A lookup step with its table read as the plan's earlier operations would leave it.
    private func prepared(_ step: EntityStep) async throws -> EntityStep {
        guard let spec = step.lookup else { return step }
        guard exists[spec.fromTable.lowercased()] != nil else {
            throw RunError("lookup: table \(spec.fromTable) does not exist, and no operation before it creates it; name the right table")
        }
        var entries: [(partitionKey: String, rowKey: String, value: EdmValue)] = []
        // Held up to one past the bound (then refused), however large the table: memory stays bounded.
        try await visit(spec.fromTable, filter: nil) { entity in
            guard entries.count <= LookupValues.maxEntities, let value = entity[spec.property] else { return }
            entries.append((entity.partitionKey, entity.rowKey, value))
        }
        try LookupLoader.check(entries.count, spec)
        return step.withLookup(LookupValues(entries))
    }

    private func visit(_ table: String, filter step: EntityStep?, limit: Int? = nil, _ body: (TableEntity) -> Void) async throws {
        let key = table.lowercased()
        let source = copiedFrom[key] ?? key
        let before = (copiedFrom[key] != nil ? copiedSteps[key] ?? [] : []) + (earlier[key] ?? [])
        let filter = before.isEmpty ? step?.filterText.map { TableFilter.written($0, comparisons: step!.filterComparisons) } : nil
        var read = 0
        do {
            for try await page in tables.query(copiedFrom[key] != nil ? source : table, filter: filter, fullMetadata: true) {
                read += page.count
                observer.reading(read)
                entities: for queried in page {
                    var entity = queried.entity
                    for earlierStep in before where earlierStep.selects(entity) {
                        switch earlierStep.change.apply(to: entity) {
                        case .replaced(let changed), .rekeyed(let changed): entity = changed
                        case .deleted: continue entities
                        case .unchanged, .failed: break
                        }
                    }
                    body(entity)
                }
                if let limit, read >= limit { break }
            }
        } catch {
            throw RunError.explaining(error, while: "reading table \(source)")
        }
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
