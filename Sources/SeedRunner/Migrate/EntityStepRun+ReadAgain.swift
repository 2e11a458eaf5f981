import AzureStorage
import Foundation
import SeedKit

/// Reading a batch again: after a 412 (someone wrote meanwhile), and when a run resumes with a
/// batch it had recorded as pending, to tell whether that batch was written.
extension EntityStepRun {
    /// Whether `read` belongs to one of the `unsettled` batches — recorded as pending and not
    /// known to be answered — and holds, under another ETag than the one recorded, the value
    /// the step writes: written by the request that batch was, whose answer never came back
    /// (a run that stopped, or a connection that dropped after the service applied it).
    static func writtenBefore(_ read: QueriedEntity, _ unsettled: [MigrationRecord.PendingBatch], step: EntityStep) -> Bool {
        unsettled.contains { batch in
            guard read.entity.partitionKey.isExactly(batch.partitionKey),
                let row = batch.rows.first(where: { $0.rowKey.isExactly(read.entity.rowKey) }), row.written != "absent", read.etag != row.etag
            else { return false }
            return step.writtenDigest(read.entity) == row.written
        }
    }

    /// Whether an entity that is gone was one the `unsettled` batches delete.
    static func deletedBefore(_ entity: TableEntity, _ unsettled: [MigrationRecord.PendingBatch]) -> Bool {
        unsettled.contains { batch in
            entity.partitionKey.isExactly(batch.partitionKey)
                && batch.rows.contains { $0.rowKey.isExactly(entity.rowKey) && $0.written == "absent" }
        }
    }

    /// The entities read again (``current(_:tables:table:)``) with what the step makes of each
    /// now, gone ones dropped — leaving out (and counting) the entities of the unsettled
    /// batches found written — or deleted — by the requests they were.
    static func reread(_ entities: [TableEntity], tables: TableClient, step: EntityStep, unsettled: [MigrationRecord.PendingBatch]) async throws
        -> (batch: [Change], settled: Int)
    {
        var again: [Change] = []
        var settled = 0
        for (entity, read) in zip(entities, try await current(entities, tables: tables, table: step.table)) {
            if let read, writtenBefore(read, unsettled, step: step) {
                settled += 1
            } else if read == nil, deletedBefore(entity, unsettled) {
                settled += 1
            } else if let read, let change = try changed(read, step: step) {
                again.append(change)
            }
        }
        return (again, settled)
    }

    /// Keys a query reading entities again names at once: Azure allows 15 comparisons in a
    /// filter, and the partition takes one.
    static let keysPerRead = 14

    /// The entities as they are now, in order (nil: gone): one query per ``keysPerRead`` keys of
    /// a partition, several at once, rather than a request each — a batch read again after its
    /// answer was lost is 8 requests, not 100.
    static func current(_ entities: [TableEntity], tables: TableClient, table: String) async throws -> [QueriedEntity?] {
        var groups: [[TableEntity]] = []
        for entity in entities {
            if let last = groups.last?.last, last.partitionKey.isExactly(entity.partitionKey), groups[groups.count - 1].count < keysPerRead {
                groups[groups.count - 1].append(entity)
            } else {
                groups.append([entity])
            }
        }
        var found: [ExactString: QueriedEntity] = [:]
        func key(_ entity: TableEntity) -> ExactString { ExactString(entity.partitionKey + "\u{0}" + entity.rowKey) }
        try await withThrowingTaskGroup(of: [QueriedEntity].self) { group in
            for keys in groups {
                let filter: TableFilter = .and(
                    .partition(keys[0].partitionKey),
                    keys.dropFirst().reduce(TableFilter.equal("RowKey", .string(keys[0].rowKey))) { .or($0, .equal("RowKey", .string($1.rowKey))) })
                group.addTask {
                    var read: [QueriedEntity] = []
                    for try await page in tables.query(table, filter: filter, fullMetadata: true) { read += page }
                    return read
                }
            }
            for try await read in group {
                for entity in read { found[key(entity.entity)] = entity }
            }
        }
        return entities.map { found[key($0)] }
    }

    /// What the step makes of an entity read again: nil when it leaves it as it is.
    static func changed(_ read: QueriedEntity, step: EntityStep) throws -> Change? {
        guard step.selects(read.entity) else { return nil }
        let outcome = step.change.apply(to: read.entity)
        switch outcome {
        case .unchanged: return nil
        case .failed(let why): throw Stopped(message: "table \(step.table), entity (\(Self.shown(read.entity))): \(why)")
        case .rekeyed: throw Self.notBatched
        case .replaced, .deleted: return (read, outcome)
        }
    }

    /// Whether a batch recorded as pending was written. A batch is atomic: one entity still
    /// with the ETag read says none was; one holding the value the step writes says all were.
    /// Every entity gone says there is nothing left to do. Every one changed by someone else
    /// since, none holding the step's value, cannot be told apart: the run stops and says so.
    func committed(_ pending: MigrationRecord.PendingBatch) async throws -> Bool {
        var written = false
        var present = false
        for row in pending.rows {
            guard let now = try await tables.get(partitionKey: pending.partitionKey, rowKey: row.rowKey, from: step.table) else { continue }
            present = true
            if now.etag == row.etag { return false }
            if row.written != "absent" && step.writtenDigest(now.entity) == row.written { written = true }
        }
        if written || !present { return true }
        throw Stopped(
            message:
                "table \(step.table), partition '\(Printable.escaped(pending.partitionKey, quotes: false))': the batch being written when the run stopped cannot be told written or not — every entity of it (RowKeys \(pending.rows.prefix(3).map { "'\(Printable.escaped($0.rowKey, quotes: false))'" }.joined(separator: ", "))\(pending.rows.count > 3 ? ", …" : "")) was changed by someone else since, and none holds the value this step writes. Check them: one that holds the step's change already should be put back as it was; then repair, and apply applies the step to them again"
        )
    }
}
