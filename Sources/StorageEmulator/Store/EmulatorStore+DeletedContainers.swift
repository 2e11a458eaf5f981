import Foundation
import GRDB
import StorageProtocol

/// Container soft delete (`--container-soft-delete DAYS`): a deleted container and its blobs are
/// kept under an internal name for the retention period, listed by List Containers
/// `include=deleted` with the name they had and a version, and brought back by Restore
/// Container; expired ones are removed the next time containers are deleted, listed or restored.
extension EmulatorStore {
    /// The internal name a soft-deleted container's rows live under. It starts with U+0001, which
    /// no container name holds and no request can name (``BlobService/parseTarget(_:)`` refuses
    /// control characters), so nothing reaches a deleted container but Restore Container.
    static func deletedName(_ name: String, _ version: String) -> String { "\u{1}\(name)/\(version)" }

    /// Azure's container version: the deletion time as a FILETIME, 16 hex digits.
    static func containerVersion(_ at: EdmDateTime) -> String {
        String(format: "%016llX", UInt64(max(0, at.ticks - 504_911_232_000_000_000)))
    }

    /// Moves a container's rows to its deleted name (in this transaction), kept `days`; leases end.
    static func softDeleteContainer(_ name: String, now: EdmDateTime, days: Int, _ db: Database) throws {
        var at = now
        var version = containerVersion(at)
        // Two deletions of one name within a tick get versions of their own.
        while try Int.fetchOne(db, sql: "SELECT 1 FROM containers WHERE name = ?", arguments: [deletedName(name, version)]) != nil {
            at = EdmDateTime(ticks: at.ticks + 1)
            version = containerVersion(at)
        }
        let hidden = deletedName(name, version)
        try BlobLease.delete(name, nil, db)
        for table in containerTables { try db.execute(sql: "UPDATE \(table) SET container = ? WHERE container = ?", arguments: [hidden, name]) }
        try db.execute(
            sql: "UPDATE containers SET name = ?, deletedName = ?, deletedVersion = ?, deletedAt = ?, deletedUntil = ? WHERE name = ?",
            arguments: [hidden, name, version, now.ticks, now.ticks + Int64(days) * 864_000_000_000, name])
    }

    /// Removes the soft-deleted containers whose retention ended; answers the bytes freed. Each
    /// is kept for the days in force when it was deleted, also if the setting changed since (as
    /// Azure keeps soft-deleted data after soft delete is switched off).
    static func purgeDeletedContainers(now: EdmDateTime, _ db: Database) throws -> [String] {
        let expired = try String.fetchAll(
            db, sql: "SELECT name FROM containers WHERE deletedAt IS NOT NULL AND deletedUntil <= ?", arguments: [now.ticks])
        var freed: [String] = []
        for name in expired { freed += try removeContainer(name, db) }
        return freed
    }

    /// Restore Container: the soft-deleted `deletedName` of `version` becomes `name` again, its
    /// blobs and properties as they were. Azure restores only under the name it had.
    func restoreContainer(_ name: String, deletedName: String, version: String) async throws -> ContainerRecord {
        let now = clock.now()
        let (record, freed) = try await write { db -> (ContainerRecord, [String]) in
            let freed = try Self.purgeDeletedContainers(now: now, db)
            let hidden = Self.deletedName(deletedName, version)
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM containers WHERE name = ? AND deletedAt IS NOT NULL", arguments: [hidden]) != nil
            else {
                throw ServiceError(
                    404, .containerNotFound, "The specified container does not exist: no deleted container \(deletedName) of version \(version).")
            }
            if try Self.container(name, db) != nil {
                throw ServiceError(409, .containerAlreadyExists, "The specified container already exists.")
            }
            for table in Self.containerTables {
                try db.execute(sql: "UPDATE \(table) SET container = ? WHERE container = ?", arguments: [name, hidden])
            }
            try db.execute(
                sql: "UPDATE containers SET name = ?, deletedName = NULL, deletedVersion = NULL, deletedAt = NULL WHERE name = ?",
                arguments: [name, hidden])
            return (try Self.container(name, db)!, freed)
        }
        await deleteBytes(freed)
        return record
    }

    /// Removes expired soft-deleted containers (before a listing shows them).
    func purgeDeletedContainers() async throws {
        let now = clock.now()
        let freed = try await write { db in try Self.purgeDeletedContainers(now: now, db) }
        await deleteBytes(freed)
    }
}
