import AzureStorage
import Crypto
import Foundation
import SeedKit

/// `migrate rehearse` (Liquibase's update-testing-rollback, without touching the target): the
/// tables and containers the pending migrations touch — whole, or `sample` entities a partition
/// and blobs a container — and the ledger's migration records are copied into scratch storage
/// in memory; there the migrations are applied, then undone, and every entity and blob
/// compared byte for byte with the copy. The target is only read: no lock, no ledger write.
public struct MigrateRehearse: Sendable {
    public let migrator: Migrator
    /// Scratch storage for one rehearsal, thrown away after it (the CLI gives an in-memory
    /// emulator: `EmulatorEmbeddedStorage.scratch()`).
    public let scratch: @Sendable () async throws -> EmbeddedStorageConnection

    public init(_ migrator: Migrator, scratch: @escaping @Sendable () async throws -> EmbeddedStorageConnection) {
        self.migrator = migrator
        self.scratch = scratch
    }

    /// What a rehearsal found.
    public struct Result: Sendable {
        /// Entities copied by table, blobs by container, in the order copied.
        public var tables: [(name: String, entities: Int)] = []
        public var containers: [(name: String, blobs: Int)] = []
        /// Whether `sample` limited the copy.
        public var sampled: Bool = false
        /// Each pending migration as applied to the copy.
        public var applied: [MigrationReport] = []
        /// Each as undone (newest first), or why undo refused: then nothing is compared.
        public var undone: [MigrationReport] = []
        public var undoRefused: Phrase?
        /// Entities and blobs that differ after undo from the copy (at most 20 named).
        public var differences: [String] = []
        public var differenceCount = 0

        /// Apply and undo gave back every entity and blob byte for byte.
        public var exact: Bool { undoRefused == nil && differenceCount == 0 }
    }

    /// The most entities and blobs a rehearsal copies (sample or not): memory and time are
    /// bounded, a larger target rehearses with `--sample`.
    public static let maxCopied = 2_000_000

    public func run(to: MigrationVersion? = nil, sample: Int? = nil) async throws -> Result {
        let files = try await migrator.load()
        return try await migrator.session { session in
            let ledger = Ledger(tables: session.run.tables)
            let status = try await ledger.status(of: files)
            if let problem = status.problems.first { throw RunError(Migrator.refusal(problem, count: status.problems.count, writing: false)) }
            let chosen = Migrator.chosen(status, to: to)
            try Migrator.checkAcknowledged(chosen)
            var result = Result()
            result.sampled = sample != nil
            guard let first = chosen.first?.migration?.version else { return result }
            let (tables, containers) = Self.touched(chosen.compactMap(\.migration))
            let connection = try await scratch()
            do {
                let copy = (tables: TableClient(account: connection.account), blobs: BlobClient(account: connection.account))
                try await copyLedger(from: session.run.tables, to: copy.tables)
                for table in tables {
                    let count = try await copyTable(table, from: session.run.tables, to: copy.tables, sample: sample, copied: result.tables)
                    if let count { result.tables.append((table, count)) }
                }
                for container in containers {
                    let count = try await copyContainer(container, from: session.run.blobs, to: copy.blobs, sample: sample)
                    if let count { result.containers.append((container, count)) }
                }
                let before = try await Self.state(copy.tables, copy.blobs, tables: tables, containers: containers)
                var rehearsal = Migrator(
                    target: RunTarget(location: .account(connection.account)), folder: migrator.folder, observer: migrator.observer,
                    tool: migrator.tool)
                rehearsal.code = migrator.code
                result.applied = try await rehearsal.apply(to: to)
                do {
                    result.undone = try await rehearsal.undo(to: first)
                } catch let refused as RunError {
                    result.undoRefused = refused.phrase
                }
                if result.undoRefused == nil {
                    let after = try await Self.state(copy.tables, copy.blobs, tables: tables, containers: containers)
                    for key in Set(before.keys).union(after.keys).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) })
                    where before[key] != after[key] && !Self.leftEmpty(key, before: before, after: after) {
                        result.differenceCount += 1
                        if result.differences.count < 20 {
                            result.differences.append(
                                "\(Printable.escaped(key, quotes: false)): \(before[key] == nil || before[key] == "absent" ? "there after undo, not before" : after[key] == nil || after[key] == "absent" ? "gone after undo" : "differs after undo")"
                            )
                        }
                    }
                }
            } catch {
                await connection.close()
                throw error
            }
            await connection.close()
            return result
        }
    }

    /// The tables and containers the migrations read or write, each once, in order.
    static func touched(_ migrations: [Migration]) -> (tables: [String], containers: [String]) {
        var tables: [String] = []
        var containers: [String] = []
        func table(_ name: String) { if !tables.contains(where: { $0.lowercased() == name.lowercased() }) { tables.append(name) } }
        func container(_ name: String) { if !containers.contains(name) { containers.append(name) } }
        for operation in migrations.flatMap(\.operations) {
            switch operation {
            case .createTable(let name), .deleteTable(let name): table(name)
            case .copyTable(let from, let to):
                table(from)
                table(to)
            case .entities(let step):
                table(step.table)
                if let spec = step.lookup { table(spec.fromTable) }
            case .blobs(let step):
                container(step.container)
                if case .move(let to, _) = step.change { container(to) }
            }
        }
        return (tables, containers)
    }

    /// The target's migration records, so the copy's ledger says what the target's does.
    private func copyLedger(from source: TableClient, to copy: TableClient) async throws {
        var records: [TableEntity] = []
        do {
            for partition in [MigrationRecord.partition, MigrationRecord.shardPartition] {
                for try await page in source.query(ReservedNames.ledgerTable, filter: .partition(partition), fullMetadata: true) {
                    records += page.map(\.entity)
                }
            }
        } catch let error as AzureStorageError where error.status == 404 {
            return
        }
        guard !records.isEmpty else { return }
        _ = try await copy.ensureTable(ReservedNames.ledgerTable)
        for record in records { _ = try await copy.upsert(record, into: ReservedNames.ledgerTable) }
    }

    /// Copies a table (its first `sample` entities of each partition); nil when it is not there.
    private func copyTable(
        _ table: String, from source: TableClient, to copy: TableClient, sample: Int?, copied: [(name: String, entities: Int)]
    ) async throws -> Int? {
        var count = 0
        var perPartition: [ExactString: Int] = [:]
        var batch: [TableBatchOperation] = []
        func flush() async throws {
            guard !batch.isEmpty else { return }
            _ = try await copy.submit(batch, to: table)
            batch = []
        }
        var made = false
        do {
            for try await page in source.query(table, fullMetadata: true) {
                if !made {
                    made = try await copy.ensureTable(table) || true
                }
                for queried in page {
                    let partition = ExactString(queried.entity.partitionKey)
                    if let sample, perPartition[partition, default: 0] >= sample { continue }
                    perPartition[partition, default: 0] += 1
                    if let first = batch.first, !first.partitionKey.isExactly(queried.entity.partitionKey) || batch.count == 100 { try await flush() }
                    batch.append(.upsertReplace(queried.entity))
                    count += 1
                    guard count + copied.reduce(0, { $0 + $1.entities }) <= Self.maxCopied else {
                        throw RunError(
                            "rehearse copies at most \(Self.maxCopied) entities and blobs; table \(table) takes it past that — rehearse a sample (\(Setting.sampleSize): entities a partition)"
                        )
                    }
                }
            }
            try await flush()
        } catch let error as AzureStorageError where error.status == 404 && error.operation == "Query Entities" {
            return nil  // not there: a migration creates it, or refuses as apply would
        }
        return count
    }

    /// Copies a container's blobs (its first `sample`), their bytes and properties; nil when it
    /// is not there.
    private func copyContainer(_ container: String, from source: BlobClient, to copy: BlobClient, sample: Int?) async throws -> Int? {
        guard let access = try await source.containerAccess(container) else { return nil }
        _ = try await copy.ensureContainer(container, access: access)
        var count = 0
        for try await page in source.list(container: container) {
            for blob in page {
                if let sample, count >= sample { return count }
                let bytes = try await source.download(container: container, name: blob.name)
                _ = try await copy.putBlob(bytes, container: container, name: blob.name, options: blob.uploadOptions)
                count += 1
                guard count <= Self.maxCopied else {
                    throw RunError("rehearse copies at most \(Self.maxCopied) blobs; rehearse a sample (\(Setting.sampleSize))")
                }
            }
        }
        return count
    }

    /// A container a move created, left empty by its undo: as `migrate undo` documents it, not
    /// a difference.
    static func leftEmpty(_ key: String, before: [String: String], after: [String: String]) -> Bool {
        guard key.hasPrefix("container "), before[key] == "absent", after[key] == "present" else { return false }
        let prefix = "blob " + key.dropFirst("container ".count) + "/"
        return !after.keys.contains { $0.hasPrefix(prefix) }
    }

    /// Every entity and blob of the tables and containers, by name, as text that is equal
    /// exactly when they are equal byte for byte (a blob: its properties and its bytes' SHA-256).
    static func state(_ tables: TableClient, _ blobs: BlobClient, tables names: [String], containers: [String]) async throws -> [String: String] {
        var state: [String: String] = [:]
        for table in names {
            do {
                for try await page in tables.query(table, fullMetadata: true) {
                    for queried in page {
                        state["table \(table), (\(queried.entity.partitionKey), \(queried.entity.rowKey))"] = queried.entity.canonicalText
                    }
                }
            } catch let error as AzureStorageError where error.status == 404 {
                state["table \(table)"] = "absent"
            }
        }
        for container in containers {
            do {
                state["container \(container)"] = "present"
                for try await page in blobs.list(container: container) {
                    for blob in page {
                        let bytes = try await blobs.download(container: container, name: blob.name)
                        let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
                        state["blob \(container)/\(blob.name)"] = "\(digest) \(blob.uploadOptions) \(blob.metadata.sorted { $0.key < $1.key })"
                    }
                }
            } catch let error as AzureStorageError where error.status == 404 {
                state["container \(container)"] = "absent"
            }
        }
        return state
    }
}
