import AzureStorage
import Foundation
import SeedKit
import Synchronization

extension Ledger {
    /// Every migration record in the target's ledger, by version; none when there is no ledger.
    /// A credential that cannot read it is an error: migrating blind would apply twice.
    func migrationRecords() async throws -> [MigrationRecord] {
        try await records(in: MigrationRecord.partition)
    }

    /// The shards' own records of migrations applied in shards (``MigrationRecord/shardPartition``).
    func shardRecords() async throws -> [MigrationRecord] {
        try await records(in: MigrationRecord.shardPartition)
    }

    /// Removes every shard record of `version` (an undo, or the migration's record written).
    func deleteShardRecords(_ version: String, among records: [MigrationRecord]) async throws {
        for record in records where record.version == version {
            guard let shard = record.shard else { continue }
            do {
                try await tables.deleteEntity(
                    partitionKey: MigrationRecord.shardPartition, rowKey: MigrationRecord.shardRowKey(version, shard), from: ReservedNames.ledgerTable
                )
            } catch let error as AzureStorageError where error.status == 404 {
            } catch {
                throw RunError.explaining(error, while: "removing a shard record of migration \(version) from azseed's ledger")
            }
        }
    }

    private func records(in partition: String) async throws -> [MigrationRecord] {
        var records: [MigrationRecord] = []
        do {
            for try await page in tables.query(ReservedNames.ledgerTable, filter: .partition(partition), fullMetadata: true) {
                for queried in page {
                    var record = try MigrationRecord(queried.entity)
                    record.etag = queried.etag
                    records.append(record)
                    // Shard records are kept until the migration's record is written: at most a
                    // few migrations' shards at once.
                    let limit = partition == MigrationRecord.partition ? MigrationSet.maxMigrations + 1 : 100_000
                    guard records.count <= limit else {
                        throw RunError(
                            "the ledger holds more than \(limit) records in partition \(partition); that is not a ledger azseed wrote")
                    }
                }
            }
        } catch let error as AzureStorageError where error.status == 404 {
            return []  // no ledger table yet
        } catch let error as AzureStorageError {
            throw RunError.explaining(error, while: "reading the migration history (table \(ReservedNames.ledgerTable))")
        }
        return records.sorted { (MigrationVersion($0.version) ?? MigrationVersion("0")!) < (MigrationVersion($1.version) ?? MigrationVersion("0")!) }
    }

    /// Writes a migration record whole (a Replace: a cleared checkpoint leaves nothing behind),
    /// creating the ledger's table on first use.
    func write(_ record: MigrationRecord) async throws {
        do {
            _ = try await tables.upsert(record.entity, into: ReservedNames.ledgerTable)
        } catch let error as AzureStorageError where error.status == 404 {
            do {
                _ = try await tables.ensureTable(ReservedNames.ledgerTable)
                _ = try await tables.upsert(record.entity, into: ReservedNames.ledgerTable)
            } catch {
                throw RunError.explaining(
                    error, while: "recording migration \(record.version) in azseed's ledger (table \(ReservedNames.ledgerTable))")
            }
        } catch {
            throw RunError.explaining(error, while: "recording migration \(record.version) in azseed's ledger (table \(ReservedNames.ledgerTable))")
        }
    }

    /// Writes the record of a running migration only while it is the one this run last read or
    /// wrote (`If-Match` on ``RecordFence``; a first record only if there is none): a run that
    /// took the lock over writes the record before its first change, so the run it took it from
    /// fails its next ledger write — and every batch that is not idempotent is preceded by one —
    /// and stops there, in one line.
    ///
    /// Each write carries a `WriteId` of its own: a write the service applied but whose answer
    /// was lost (a dropped connection, a 500 after applying) is retried by the pipeline and
    /// refused (412, or 409 for a first record); the record then holding this write's id is this
    /// write, not another run's — its ETag is taken and the run goes on.
    func write(_ record: MigrationRecord, fence: RecordFence) async throws {
        let expected = fence.etag
        let what = "recording migration \(record.version) in azseed's ledger (table \(ReservedNames.ledgerTable))"
        var entity = record.entity
        let id = EdmValue.string(UUID().uuidString)
        entity.properties["WriteId"] = id
        do {
            if let expected {
                fence.etag = try await tables.update(entity, in: ReservedNames.ledgerTable, etag: expected)
            } else {
                do {
                    fence.etag = try await tables.insert(entity, into: ReservedNames.ledgerTable)
                } catch let error as AzureStorageError where error.status == 404 {
                    _ = try await tables.ensureTable(ReservedNames.ledgerTable)
                    fence.etag = try await tables.insert(entity, into: ReservedNames.ledgerTable)
                }
            }
        } catch let error as AzureStorageError where error.status == 412 || error.status == 409 || (error.status == 404 && expected != nil) {
            if let now = try? await tables.get(partitionKey: entity.partitionKey, rowKey: entity.rowKey, from: ReservedNames.ledgerTable),
                now.entity.properties["WriteId"] == id, let etag = now.etag
            {
                fence.etag = etag
                return
            }
            throw MigrationLock.takenOver("migration \(record.version)'s record in the ledger was written by another run")
        } catch let error as RunError {
            throw error
        } catch {
            throw RunError.explaining(error, while: what)
        }
    }

    /// Removes a migration record (`repair` of a failed run, of a record without a file).
    func deleteMigrationRecord(_ version: String) async throws {
        do {
            try await tables.deleteEntity(partitionKey: MigrationRecord.partition, rowKey: version, from: ReservedNames.ledgerTable)
        } catch let error as AzureStorageError where error.status == 404 {
        } catch {
            throw RunError.explaining(error, while: "removing migration \(version) from azseed's ledger")
        }
    }
}

/// The ETag of the one migration record a run writes, as the run last read or wrote it: the
/// fence that lets a run write its record (and so make its next change) only while no other
/// run has written it since (``Ledger/write(_:fence:)``).
final class RecordFence: Sendable {
    private let current: Mutex<String?>

    /// `etag`: the record's as read, nil when the ledger had none.
    init(_ etag: String?) { current = Mutex(etag) }

    var etag: String? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
