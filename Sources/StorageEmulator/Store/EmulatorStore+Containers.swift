import AzureStorage
import Foundation
import GRDB

extension EmulatorStore {
    static let containerNotFound = ServiceError(404, .containerNotFound, "The specified container does not exist.")

    func container(_ name: String) async throws -> ContainerRecord? {
        try await read { db in try Self.container(name, db) }
    }

    static func container(_ name: String, _ db: Database) throws -> ContainerRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM containers WHERE name = ?", arguments: [name]).map(ContainerRecord.init(row:))
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

    /// Deletes a container and everything in it; a leased container needs its lease id,
    /// checked in this transaction, as are `conditions`.
    func deleteContainer(_ name: String, leaseID: String? = nil, conditions: WriteConditions = WriteConditions()) async throws {
        let now = clock.now()
        let freed = try await write { db -> [String] in
            guard let existing = try Self.container(name, db) else { throw Self.containerNotFound }
            try BlobLease.check(try BlobLease.read(name, BlobLease.containerKey, db), given: leaseID, write: true, at: now, container: true)
            try Self.check(conditions, existing)
            let ids = try String.fetchAll(
                db,
                sql: """
                    SELECT data FROM blobs WHERE container = ? AND data != '' UNION SELECT data FROM blocks WHERE container = ?
                    UNION SELECT data FROM pages WHERE container = ? AND data != ''
                    UNION SELECT data FROM snapshots WHERE container = ? AND data != ''
                    UNION SELECT data FROM snapshot_pages WHERE container = ? AND data != ''
                    """,
                arguments: [name, name, name, name, name])
            try db.execute(sql: "DELETE FROM snapshots WHERE container = ?", arguments: [name])
            try db.execute(sql: "DELETE FROM snapshot_pages WHERE container = ?", arguments: [name])
            try db.execute(sql: "DELETE FROM blobs WHERE container = ?", arguments: [name])
            try db.execute(sql: "DELETE FROM blocks WHERE container = ?", arguments: [name])
            try db.execute(sql: "DELETE FROM pages WHERE container = ?", arguments: [name])
            try BlobLease.delete(name, nil, db)
            try db.execute(sql: "DELETE FROM containers WHERE name = ?", arguments: [name])
            return ids
        }
        await deleteBytes(freed)
    }

    /// Containers in name order from `marker` on, at most `limit`; the next marker when more follow.
    /// `hidden`: names left out (the system containers, unless asked for) — before the page is
    /// cut, so a page holds `limit` of the others.
    func listContainers(prefix: String, marker: String, limit: Int, hidden: [String] = []) async throws -> ([ContainerRecord], String?) {
        try await read { db in
            let exclude = hidden.isEmpty ? "" : " AND name NOT IN (\(hidden.map { _ in "?" }.joined(separator: ", ")))"
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM containers WHERE name >= ? AND substr(name, 1, length(?)) = ?\(exclude) ORDER BY name LIMIT ?",
                arguments: StatementArguments([marker, prefix, prefix] + hidden.map { $0 as any DatabaseValueConvertible } + [limit + 1]))
            let records = rows.map(ContainerRecord.init(row:))
            return (Array(records.prefix(limit)), records.count > limit ? records[limit].name : nil)
        }
    }
}
