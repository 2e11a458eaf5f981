import AzureStorage
import Foundation
import GRDB

/// The emulator's state: SQLite (through GRDB) for containers, blob properties, tables and
/// entities; a byte store for blob contents.
///
/// Order of writes makes crashes safe: blob bytes are written and fsynced before the
/// transaction that points at them commits, and old bytes are removed only after the
/// transaction that stopped pointing at them. A crash in between leaves an unreferenced
/// file, which the next start removes.
final class EmulatorStore: Sendable {
    let db: any DatabaseWriter
    let bytes: any ByteStore
    let clock = ServerClock()

    /// Opens the store in `dataDirectory`, or in memory when it is nil.
    init(dataDirectory: URL?) throws {
        db = try EmulatorDatabase.open(directory: dataDirectory)
        if let dataDirectory {
            bytes = try FileByteStore(root: dataDirectory.appendingPathComponent("blobs", isDirectory: true))
            try removeOrphans()
        } else {
            bytes = MemoryByteStore()
        }
    }

    /// Deletes byte files no row refers to (left by a crash between writing bytes and committing).
    private func removeOrphans() throws {
        let referenced = try db.read { db in
            Set(try String.fetchAll(db, sql: "SELECT data FROM blobs UNION SELECT data FROM blocks"))
        }
        for id in bytes.allIDs() where !referenced.contains(id) { bytes.delete(id) }
    }

    /// Runs a write transaction; a `ServiceError` thrown inside rolls it back and is rethrown as is.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await db.write(body)
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await db.read(body)
    }
}
