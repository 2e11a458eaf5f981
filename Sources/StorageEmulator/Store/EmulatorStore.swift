import Foundation
import GRDB
import StorageProtocol

/// The emulator's state: SQLite (through GRDB) for containers, blob properties, tables and
/// entities; a byte store for blob contents.
///
/// Order of writes makes crashes safe: blob bytes are written and flushed (one `syncfs` per
/// group commit) before the transaction that points at them commits, and old bytes are removed only after the
/// transaction that stopped pointing at them. A crash in between leaves an unreferenced
/// file, which the next start removes.
///
/// A data folder has one owner: the store takes the folder's lock (`DataFolderLock`) before
/// opening the database or sweeping, and keeps it until `close()`.
final class EmulatorStore: Sendable {
    let db: any DatabaseWriter
    /// Where every write transaction runs (its own thread, commits shared by concurrent writes).
    private let writes: GroupCommit
    let bytes: any ByteStore
    let clock = ServerClock()
    /// Appends to one blob, one at a time (each rewrites the blob's bytes).
    let appends = KeyedLock()
    /// Byte objects open page blob readers still need; their deletion waits.
    let pins = BytePins()
    /// The folder's lock; nil in memory.
    let lock: DataFolderLock?
    /// Blob versioning (`--blob-versioning`): writes keep what they replace as versions.
    let versioning: Bool
    /// Container soft delete (`--container-soft-delete DAYS`): how long a deleted container is kept.
    let containerRetentionDays: Int?

    /// Opens the store in `dataDirectory`, or in memory when it is nil; `command` is written
    /// into the folder's lock so a second opener can name the owner.
    init(dataDirectory: URL?, command: String = "azseed", versioning: Bool = false, containerRetentionDays: Int? = nil) throws {
        self.versioning = versioning
        self.containerRetentionDays = containerRetentionDays
        if let dataDirectory {
            let lock = try DataFolderLock(folder: dataDirectory, command: command)
            let files: FileByteStore
            do {
                db = try EmulatorDatabase.open(directory: dataDirectory)
                files = try FileByteStore(root: dataDirectory.appendingPathComponent("blobs", isDirectory: true))
            } catch let error as DatabaseError {
                lock.release()
                // SQLite's own text ("file is not a database - while executing …") names no file.
                throw EmulatorStartError(
                    phrase:
                        "\(dataDirectory.appendingPathComponent("storage.sqlite").path): cannot be opened as azseed's storage (SQLite: \(error.message ?? "error \(error.resultCode.rawValue)")); move it away or pass another \(Setting.dataFolder)"
                )
            } catch {
                lock.release()
                throw error
            }
            bytes = files
            self.lock = lock
            writes = GroupCommit(writer: db, reclaimsSpace: true, beforeCommit: { try files.makeDurable() })
            try removeOrphans()
        } else {
            db = try EmulatorDatabase.open(directory: nil)
            bytes = MemoryByteStore()
            lock = nil
            writes = GroupCommit(writer: db, beforeCommit: {})
        }
    }

    /// Gives up the data folder (the lock); the store is not used afterwards.
    /// Waits for the writer thread to commit what is queued and end, then gives up the folder.
    func close() async {
        await writes.stop()
        lock?.release()
    }

    deinit { writes.requestStop() }

    /// Deletes byte files no row refers to (left by a crash between writing bytes and
    /// committing). Files modified since the sweep began are never candidates: even if
    /// another writer got past the lock, nothing it has just written is removed.
    private func removeOrphans() throws {
        let started = Date()
        let referenced = try db.read { db in
            Set(
                try String.fetchAll(
                    db,
                    sql:
                        "SELECT data FROM blobs UNION SELECT data FROM blocks UNION SELECT data FROM pages UNION SELECT data FROM snapshots UNION SELECT data FROM snapshot_pages"
                ))
        }
        for id in bytes.orphanCandidates(olderThan: started) where !referenced.contains(id) { bytes.delete(id) }
    }

    /// Runs a write in the next group commit (see `GroupCommit`); returns once it is durable.
    /// A `ServiceError` thrown inside rolls it back and is rethrown as is.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writes.write(body)
    }

    /// Reads a consistent snapshot on the blocking-I/O threads (`BlockingPool`): GRDB runs a
    /// synchronous read on the calling thread, so no global-queue thread waits on the disk.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let db = self.db
        return try await BlockingPool.run { try db.read(body) }
    }
}
