import Foundation
import GRDB
import StorageProtocol

extension EmulatorStore {
    static let containerNotFound = ServiceError(404, .containerNotFound, "The specified container does not exist.")

    func container(_ name: String) async throws -> ContainerRecord? {
        try await read { db in try Self.container(name, db) }
    }

    static func container(_ name: String, _ db: Database) throws -> ContainerRecord? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM containers WHERE name = ?"), arguments: [name]).map(ContainerRecord.init(row:))
    }

    func createContainer(_ name: String, access: String, metadata: [(String, String)], defaultScope: String? = nil, denyOverride: Bool = false)
        async throws -> ContainerRecord
    {
        let now = clock.now()
        return try await write { db in
            if try Self.container(name, db) != nil {
                throw ServiceError(409, .containerAlreadyExists, "The specified container already exists.")
            }
            try db.execute(
                sql: """
                    INSERT INTO containers (name, access, created, modified, etag, metadata, defaultEncryptionScope, denyEncryptionScopeOverride)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    name, access, now.ticks, now.ticks, ServerClock.etag(now), MetadataCoding.encode(metadata), defaultScope, denyOverride ? 1 : 0,
                ])
            return try Self.container(name, db)!
        }
    }

    /// Sets the public access level and the signed identifiers.
    func setContainerACL(_ name: String, access: String, acl: String, conditions: WriteConditions) async throws -> ContainerRecord {
        let now = clock.now()
        return try await write { db in
            guard let existing = try Self.container(name, db) else { throw Self.containerNotFound }
            try Self.check(conditions, existing)
            try db.execute(
                sql: "UPDATE containers SET access = ?, acl = ?, modified = ?, etag = ? WHERE name = ?",
                arguments: [access, acl, now.ticks, ServerClock.etag(now), name])
            return try Self.container(name, db)!
        }
    }

    func setContainerMetadata(_ name: String, metadata: [(String, String)], conditions: WriteConditions) async throws -> ContainerRecord {
        let now = clock.now()
        return try await write { db in
            guard let existing = try Self.container(name, db) else { throw Self.containerNotFound }
            try Self.check(conditions, existing)
            try db.execute(
                sql: "UPDATE containers SET metadata = ?, modified = ?, etag = ? WHERE name = ?",
                arguments: [MetadataCoding.encode(metadata), now.ticks, ServerClock.etag(now), name])
            return try Self.container(name, db)!
        }
    }

    /// The conditions of a container write against the container, in the write's transaction.
    static func check(_ conditions: WriteConditions, _ container: ContainerRecord) throws {
        try conditions.checkETagAndTime(etag: container.etag, modified: container.modified, exists: true) { WriteConditions.notMet }
    }

    /// Deletes a container and everything in it; a leased container needs its lease id. With
    /// container soft delete on, the container and its blobs are kept instead
    /// (``softDeleteContainer(_:now:_:)``) and their bytes stay.
    func deleteContainer(_ name: String, leaseID: String? = nil, conditions: WriteConditions = WriteConditions()) async throws {
        let now = clock.now()
        let retention = containerRetentionDays
        let freed = try await write { db -> [String] in
            guard let existing = try Self.container(name, db) else { throw Self.containerNotFound }
            try BlobLease.check(try BlobLease.read(name, BlobLease.containerKey, db), given: leaseID, write: true, at: now, container: true)
            try Self.check(conditions, existing)
            var freed = try Self.purgeDeletedContainers(now: now, db)
            if let retention {
                try Self.softDeleteContainer(name, now: now, days: retention, db)
            } else {
                freed += try Self.removeContainer(name, db)
            }
            return freed
        }
        await deleteBytes(freed)
    }

    /// Removes a container's rows, its blobs' in every table; answers the byte objects freed.
    static func removeContainer(_ name: String, _ db: Database) throws -> [String] {
        let ids = try String.fetchAll(
            db,
            sql: """
                SELECT data FROM blobs WHERE container = ? AND data != '' UNION SELECT data FROM blocks WHERE container = ?
                UNION SELECT data FROM pages WHERE container = ? AND data != ''
                UNION SELECT data FROM snapshots WHERE container = ? AND data != ''
                UNION SELECT data FROM snapshot_pages WHERE container = ? AND data != ''
                """,
            arguments: [name, name, name, name, name])
        for table in containerTables { try db.execute(sql: "DELETE FROM \(table) WHERE container = ?", arguments: [name]) }
        try db.execute(sql: "DELETE FROM containers WHERE name = ?", arguments: [name])
        return ids
    }

    /// The tables whose rows belong to a container (by its name in `container`).
    static let containerTables = ["snapshots", "snapshot_pages", "blobs", "blocks", "pages", "leases"]

    /// Containers in name order from `marker` on, at most `limit`; the next marker when more follow.
    /// `hidden`: names left out (the system containers, unless asked for) — before the page is
    /// cut, so a page holds `limit` of the others. `deleted`: soft-deleted containers too, each
    /// after the live one of its name, ordered by version (the marker then names one as
    /// `name,version`: a comma sorts before every character a container name holds).
    func listContainers(prefix: String, marker: String, limit: Int, hidden: [String] = [], deleted: Bool = false) async throws
        -> ([ContainerRecord], String?)
    {
        try await read { db in
            let key = "CASE WHEN deletedAt IS NULL THEN name ELSE deletedName || ',' || deletedVersion END"
            let shown = "coalesce(deletedName, name)"
            let exclude = hidden.isEmpty ? "" : " AND \(shown) NOT IN (\(hidden.map { _ in "?" }.joined(separator: ", ")))"
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT *, \(key) AS listingKey FROM containers
                    WHERE \(deleted ? "1" : "deletedAt IS NULL") AND \(key) >= ? AND substr(\(shown), 1, length(?)) = ?\(exclude)
                    ORDER BY listingKey LIMIT ?
                    """,
                arguments: StatementArguments([marker, prefix, prefix] + hidden.map { $0 as any DatabaseValueConvertible } + [limit + 1]))
            let records = rows.map(ContainerRecord.init(row:))
            return (Array(records.prefix(limit)), records.count > limit ? rows[limit]["listingKey"] : nil)
        }
    }
}
