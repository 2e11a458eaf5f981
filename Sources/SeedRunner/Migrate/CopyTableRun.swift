import AzureStorage
import Foundation
import SeedKit

/// `copy-table`: every entity of `from` written to `to` (created when missing) exactly as read
/// (full metadata keeps every type), replacing an entity of the same keys, in batches of up to
/// 100 per partition, several in flight. Idempotent: a stopped copy is simply run again.
struct CopyTableRun {
    let tables: TableClient
    let from: String
    let to: String
    /// Only these partitions (`--shard I/N`).
    var shard: Shard? = nil
    /// Before each batch (the lock's check).
    let beforeBatch: @Sendable () async throws -> Void
    static let batchesInFlight = 16

    func run() async throws -> Int {
        do {
            _ = try await tables.ensureTable(to)
        } catch {
            throw RunError.explaining(error, while: "copy-table: creating table \(to)")
        }
        let tables = self.tables
        let to = self.to
        let beforeBatch = self.beforeBatch
        var copied = 0
        do {
            try await withThrowingTaskGroup(of: Int.self) { group in
                var inFlight = 0
                var batch: [TableEntity] = []
                func send() async throws {
                    guard !batch.isEmpty else { return }
                    try await beforeBatch()
                    if inFlight == Self.batchesInFlight, let done = try await group.next() {
                        copied += done
                        inFlight -= 1
                    }
                    let operations = batch.map(TableBatchOperation.upsertReplace)
                    group.addTask {
                        try await tables.submit(operations, to: to)
                        return operations.count
                    }
                    inFlight += 1
                    batch = []
                }
                for try await page in tables.query(from, fullMetadata: true) {
                    for read in page where shard?.owns(partition: read.entity.partitionKey) ?? true {
                        if let first = batch.first, !first.partitionKey.isExactly(read.entity.partitionKey) { try await send() }
                        batch.append(read.entity)
                        if batch.count == MigrationRecord.maxPending { try await send() }
                    }
                }
                try await send()
                while let done = try await group.next() { copied += done }
            }
        } catch let error as AzureStorageError where error.status == 404 && error.operation == "Query Entities" {
            throw RunError("copy-table: table \(from) does not exist; name the right table")
        }
        return copied
    }
}
