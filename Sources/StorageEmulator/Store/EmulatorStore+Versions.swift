import Foundation
import GRDB
import StorageProtocol

/// Blob versions and soft delete (docs/PROTOCOL.md §7). A state of a blob that stops being
/// current is kept, when the account asks for it, as a row of `snapshots`:
/// - with versioning on (`azseed emulator --blob-versioning`, an account setting on Azure),
///   every write that replaces a blob (Put Blob, Put Block List, copies, Set Blob Metadata)
///   and Delete Blob keep the state replaced as a previous version, named by its version id;
/// - with soft delete on (`DeleteRetentionPolicy` in the service properties), a deleted blob,
///   snapshot or version is kept, soft-deleted, for the policy's days, and Undelete Blob brings
///   it back; without versioning, a write that replaces a blob keeps what it replaced as a
///   soft-deleted snapshot, as Azure does.
/// A retired state takes over the byte objects of the state it was (moved, never copied);
/// only Set Blob Metadata, which keeps the bytes current, clones them first.
extension EmulatorStore {
    /// The soft delete policy: how many days a deleted state is kept, and whether a
    /// soft-deleted snapshot or version may be deleted for good before that.
    struct DeletePolicy: Sendable, Equatable {
        var days: Int
        var allowPermanentDelete: Bool
    }

    /// The Blob service's soft delete policy, read in the caller's transaction.
    static func deletePolicy(_ db: Database) throws -> DeletePolicy? {
        guard let xml = try String.fetchOne(db, sql: "SELECT xml FROM service_properties WHERE service = 'blob'"),
            let policy = XMLTree.parse(Data(xml.utf8))?["DeleteRetentionPolicy"], policy["Enabled"]?.text.lowercased() == "true"
        else { return nil }
        return DeletePolicy(
            days: Int(policy["Days"]?.text ?? "") ?? 7, allowPermanentDelete: policy["AllowPermanentDelete"]?.text.lowercased() == "true")
    }

    /// Keeps the current blob `existing` as a retired state (`kind`, `key`), soft-deleted at
    /// `deletedAt` if given: its row is copied into `snapshots`, its extents moved to
    /// `snapshot_pages`. The blob row stays for the caller to replace or delete; the byte
    /// objects now belong to the retired state — the caller must not free them.
    static func retire(_ existing: BlobRecord, as kind: BlobRecord.RetiredKind, key: String, deletedAt: EdmDateTime?, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO snapshots (container, name, snapshot, kind, deletedAt, versionId, \(snapshotColumns))
                SELECT container, name, ?, ?, ?, versionId, \(snapshotColumns) FROM blobs WHERE container = ? AND name = ?
                """, arguments: [key, kind.rawValue, deletedAt?.ticks, existing.container, existing.name])
        try db.execute(
            sql: """
                INSERT INTO snapshot_pages (container, blob, snapshot, kind, start, "end", data, dataOffset, origin)
                SELECT container, blob, ?, ?, start, "end", data, dataOffset, data FROM pages WHERE container = ? AND blob = ?
                """, arguments: [key, kind.rawValue, existing.container, existing.name])
        try db.execute(sql: "DELETE FROM pages WHERE container = ? AND blob = ?", arguments: [existing.container, existing.name])
    }

    /// What becomes of the current blob `existing` when a write replaces it: kept as a
    /// previous version (versioning), as a soft-deleted snapshot (soft delete), or freed.
    /// Returns the byte objects to free (its own, when it is not kept).
    func retireReplaced(_ existing: BlobRecord, now: EdmDateTime, _ db: Database) throws -> [String] {
        try Self.forgetSoftDeletedBase(existing.container, existing.name, now: clock.now(), db)
        if versioning {
            try Self.retire(existing, as: .version, key: existing.versionId ?? existing.modified.iso8601, deletedAt: nil, db)
            return []
        }
        if try Self.deletePolicy(db) != nil {
            try Self.retire(existing, as: .snapshot, key: now.iso8601, deletedAt: now, db)
            return []
        }
        return [existing.data]
    }

    /// Set Blob Metadata with versioning on: the blob as it was becomes a previous version (its
    /// bytes cloned, as the current version keeps them), then the metadata changes and the blob
    /// gets a new version id — in one transaction.
    func setMetadataKeepingVersion(container: String, name: String, metadata: [(String, String)], conditions: WriteConditions) async throws
        -> BlobRecord
    {
        try await withClonedState(container: container, name: name, conditions: conditions) { db, base, extents, clones, now in
            if base.isArchived { throw Self.blobArchived }
            try Self.insertClone(base, extents, clones[0], as: .version, key: base.versionId ?? base.modified.iso8601, metadata: nil, db)
            try db.execute(
                sql: "UPDATE blobs SET metadata = ?, modified = ?, etag = ?, versionId = ? WHERE container = ? AND name = ?",
                arguments: [MetadataCoding.encode(metadata), now.ticks, ServerClock.etag(now), now.iso8601, container, name])
            return try Self.blob(container, name, db)!
        }
    }

    /// A new blob written where a soft-deleted one is: Azure keeps the soft-deleted blob as a
    /// soft-deleted snapshot (Undelete then restores it as one).
    static func forgetSoftDeletedBase(_ container: String, _ name: String, now: EdmDateTime, _ db: Database) throws {
        for table in ["snapshots", "snapshot_pages"] {
            try db.execute(
                sql:
                    "UPDATE \(table) SET kind = 'snapshot', snapshot = ? WHERE container = ? AND \(table == "snapshots" ? "name" : "blob") = ? AND kind = 'base'",
                arguments: [now.iso8601, container, name])
        }
    }

    /// A previous version of a blob (not soft-deleted), or the blob itself when `versionId` is
    /// its current version id.
    static func version(_ container: String, _ name: String, _ versionId: String, _ db: Database) throws -> BlobRecord? {
        if let current = try blob(container, name, db), let id = current.versionId, id.utf8.elementsEqual(versionId.utf8) { return current }
        return try Row.fetchOne(
            db, sql: "SELECT * FROM snapshots WHERE container = ? AND name = ? AND snapshot = ? AND kind = 'version' AND deletedAt IS NULL",
            arguments: [container, name, versionId]
        ).map(BlobRecord.init(row:))
    }

    /// The blob at version `versionId` (404 BlobNotFound when there is no such version).
    func blob(_ container: String, _ name: String, versionId: String) async throws -> (ContainerRecord?, BlobRecord?) {
        try await read { db in (try Self.container(container, db), try Self.version(container, name, versionId, db)) }
    }

    /// The blob, one of its snapshots, or one of its versions.
    func blob(_ container: String, _ name: String, snapshot: String?, versionId: String?) async throws -> (ContainerRecord?, BlobRecord?) {
        if let versionId { return try await blob(container, name, versionId: versionId) }
        return try await blob(container, name, snapshot: snapshot)
    }

    /// Set Blob Tags on a previous version; false when `versionId` is the current version's
    /// (the blob's own tags are set then). 404 when there is no such version.
    func setVersionTags(container: String, name: String, versionId: String, tags: BlobTags) async throws -> Bool {
        try await updateVersion(container: container, name: name, versionId: versionId, set: "tags = ?", tags.encoded)
    }

    /// Set Blob Tier on a previous version (its tier only: a version in Archive is not
    /// rehydrated here; 409 BlobArchived); false when `versionId` is the current version's.
    func setVersionTier(container: String, name: String, versionId: String, tier: String) async throws -> Bool {
        try await setRetiredTier(container: container, name: name, kind: .version, key: versionId, tier: tier)
    }

    /// Set Blob Tier on a snapshot or previous version (its tier only: one in Archive is not
    /// rehydrated here, 409 BlobArchived); false when `key` names the current version.
    func setRetiredTier(container: String, name: String, kind: BlobRecord.RetiredKind, key: String, tier: String) async throws -> Bool {
        try await write { db in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            let found = kind == .version ? try Self.version(container, name, key, db) : try Self.snapshot(container, name, key, db)
            guard let found else { throw Self.blobNotFound }
            guard found.retired != nil else { return false }
            guard found.type == .block else { throw Self.invalidBlobType }
            if found.isArchived, tier != "Archive" { throw Self.blobArchived }
            try db.execute(
                sql: "UPDATE snapshots SET tier = ? WHERE container = ? AND name = ? AND snapshot = ? AND kind = ?",
                arguments: [tier, container, name, key, kind.rawValue])
            return true
        }
    }

    private func updateVersion(container: String, name: String, versionId: String, set: String, _ value: String) async throws -> Bool {
        try await write { db in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            guard let found = try Self.version(container, name, versionId, db) else { throw Self.blobNotFound }
            guard found.retired != nil else { return false }
            try db.execute(
                sql: "UPDATE snapshots SET \(set) WHERE container = ? AND name = ? AND snapshot = ? AND kind = 'version'",
                arguments: [value, container, name, versionId])
            return true
        }
    }

    /// Delete Blob with `?versionid=`: a previous version is soft-deleted (soft delete on) or
    /// removed; the current version is the blob, deleted as Delete Blob deletes it.
    func deleteVersion(container: String, name: String, versionId: String, permanent: Bool) async throws {
        let now = clock.now()
        let freed = try await write { db -> [String] in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            let row = try Row.fetchOne(
                db, sql: "SELECT deletedAt FROM snapshots WHERE container = ? AND name = ? AND snapshot = ? AND kind = 'version'",
                arguments: [container, name, versionId])
            guard let row else { throw Self.blobNotFound }
            let policy = try Self.deletePolicy(db)
            if permanent {
                guard policy?.allowPermanentDelete == true, (row["deletedAt"] as Int64?) != nil else { throw Self.permanentDeleteRefused }
                return try Self.removeRetired(container, name, kind: .version, only: versionId, db)
            }
            guard (row["deletedAt"] as Int64?) == nil else { throw Self.blobNotFound }
            if policy != nil {
                try db.execute(
                    sql: "UPDATE snapshots SET deletedAt = ? WHERE container = ? AND name = ? AND snapshot = ? AND kind = 'version'",
                    arguments: [now.ticks, container, name, versionId])
                return []
            }
            return try Self.removeRetired(container, name, kind: .version, only: versionId, db)
        }
        await deleteBytes(freed)
    }

    static let permanentDeleteRefused = ServiceError(
        409, .permanentDeleteNotAllowed,
        "Permanent delete of a soft-deleted snapshot or version needs AllowPermanentDelete in the delete retention policy, and applies only to a soft-deleted one."
    )

    /// Undelete Blob: the soft-deleted blob (when there is no current one), its soft-deleted
    /// snapshots and versions, within the retention days, become live again.
    func undelete(container: String, name: String) async throws {
        let now = clock.now()
        let freed = try await write { db -> [String] in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            let expired = try Self.purgeExpired(container, name, now: now, db)
            let current = try Self.blob(container, name, db)
            let base = try Row.fetchOne(
                db, sql: "SELECT * FROM snapshots WHERE container = ? AND name = ? AND kind = 'base'", arguments: [container, name])
            let softDeleted =
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM snapshots WHERE container = ? AND name = ? AND deletedAt IS NOT NULL)",
                    arguments: [container, name]) ?? false
            guard current != nil || base != nil || softDeleted else { throw Self.blobNotFound }
            if current == nil, base != nil {
                try db.execute(
                    sql: """
                        INSERT INTO blobs (container, name, versionId, \(Self.snapshotColumns))
                        SELECT container, name, versionId, \(Self.snapshotColumns) FROM snapshots WHERE container = ? AND name = ? AND kind = 'base'
                        """, arguments: [container, name])
                try db.execute(
                    sql: """
                        INSERT INTO pages (container, blob, start, "end", data, dataOffset)
                        SELECT container, blob, start, "end", data, dataOffset FROM snapshot_pages WHERE container = ? AND blob = ? AND kind = 'base'
                        """, arguments: [container, name])
                for table in ["snapshots", "snapshot_pages"] {
                    try db.execute(
                        sql: "DELETE FROM \(table) WHERE container = ? AND \(table == "snapshots" ? "name" : "blob") = ? AND kind = 'base'",
                        arguments: [container, name])
                }
            }
            try db.execute(
                sql: "UPDATE snapshots SET deletedAt = NULL WHERE container = ? AND name = ? AND deletedAt IS NOT NULL",
                arguments: [container, name])
            return expired
        }
        await deleteBytes(freed)
    }

    /// Removes the soft-deleted states of a blob whose retention days have passed, returning
    /// their byte objects. Without a policy, none expire (a policy switched off keeps what it
    /// kept until Undelete or the container goes, as nothing more is deleted softly).
    static func purgeExpired(_ container: String, _ name: String, now: EdmDateTime, _ db: Database) throws -> [String] {
        guard let policy = try deletePolicy(db) else { return [] }
        let cutoff = now.ticks - Int64(policy.days) * 86_400 * 10_000_000
        let keys = try Row.fetchAll(
            db, sql: "SELECT snapshot, kind FROM snapshots WHERE container = ? AND name = ? AND deletedAt IS NOT NULL AND deletedAt < ?",
            arguments: [container, name, cutoff])
        var freed: [String] = []
        for row in keys {
            guard let kind = BlobRecord.RetiredKind(rawValue: row["kind"]) else { continue }
            freed += try removeRetired(container, name, kind: kind, only: row["snapshot"], db)
        }
        return freed
    }

    /// The retired states List Blobs shows for `names`: previous versions (`versions`),
    /// soft-deleted snapshots, versions and blobs (`deleted`), by name, oldest first.
    func retiredStates(container: String, names: [String], versions: Bool, deleted: Bool, now: EdmDateTime) async throws -> [String: [BlobRecord]] {
        guard !names.isEmpty, versions || deleted else { return [:] }
        return try await read { db in
            let policy = try Self.deletePolicy(db)
            let cutoff = policy.map { now.ticks - Int64($0.days) * 86_400 * 10_000_000 }
            var found: [String: [BlobRecord]] = [:]
            for name in names {
                let rows = try Row.fetchAll(
                    db, sql: "SELECT * FROM snapshots WHERE container = ? AND name = ? ORDER BY snapshot", arguments: [container, name])
                let shown = rows.map(BlobRecord.init(row:)).filter { record in
                    if let at = record.deletedAt {
                        guard deleted, cutoff.map({ at.ticks >= $0 }) ?? true else { return false }
                        return record.retired != .version || versions
                    }
                    return record.retired == .version && versions
                }
                if !shown.isEmpty { found[name] = shown }
            }
            return found
        }
    }

    /// Names in `container` with `prefix`, in `[from, to)`, that have retired states List Blobs
    /// shows but no current blob (a deleted blob's versions, a soft-deleted blob).
    func namesWithoutCurrent(container: String, prefix: String, from: String, to: String?, versions: Bool, deleted: Bool) async throws
        -> [String]
    {
        guard versions || deleted else { return [] }
        let kinds = [versions ? "kind = 'version'" : nil, deleted ? "deletedAt IS NOT NULL" : nil].compactMap { $0 }.joined(separator: " OR ")
        return try await read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT name FROM snapshots WHERE container = ? AND name >= ? AND substr(name, 1, length(?)) = ? AND (\(kinds))
                    AND NOT EXISTS (SELECT 1 FROM blobs WHERE blobs.container = snapshots.container AND blobs.name = snapshots.name)
                    ORDER BY name
                    """, arguments: [container, from, prefix, prefix]
            ).filter { name in to.map { name.utf8.lexicographicallyPrecedes($0.utf8) } ?? true }
        }
    }
}
