import Foundation
import GRDB
import StorageProtocol

/// Blob snapshots: read-only copies of a blob at a moment, named by that moment
/// (`?snapshot=2026-11-26T09:30:00.1234567Z`). A snapshot's bytes are clones of the blob's
/// byte objects (hard links on disk, so a snapshot of a large blob costs no copy), its own to
/// delete; a page blob's extents keep the id each was cloned from, for page range diffs.
extension EmulatorStore {
    static let snapshotColumns = """
        data, size, contentType, contentMD5, contentEncoding, contentLanguage, contentDisposition, cacheControl,
        created, modified, etag, metadata, blocks, copy, tier, type, sequenceNumber, sealed, appendCount, tags, keySHA256, encryptionScope
        """

    static func snapshot(_ container: String, _ name: String, _ snapshot: String, _ db: Database) throws -> BlobRecord? {
        try Row.fetchOne(
            db, sql: "SELECT * FROM snapshots WHERE container = ? AND name = ? AND snapshot = ? AND kind = 'snapshot' AND deletedAt IS NULL",
            arguments: [container, name, snapshot]
        ).map(BlobRecord.init(row:))
    }

    /// A snapshot's extents; `data` is the snapshot's own object, `origin` the blob's it was cloned from.
    static func snapshotPages(_ container: String, _ name: String, _ snapshot: String, _ db: Database) throws -> [(PageExtent, String)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT start, "end", data, dataOffset, origin FROM snapshot_pages WHERE container = ? AND blob = ? AND snapshot = ?
                ORDER BY start
                """, arguments: [container, name, snapshot]
        ).map { (PageExtent(start: $0["start"], end: $0["end"], data: $0["data"], dataOffset: $0["dataOffset"]), $0["origin"]) }
    }

    static func hasSnapshots(_ container: String, _ name: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM snapshots WHERE container = ? AND name = ? AND kind = 'snapshot' AND deletedAt IS NULL)",
            arguments: [container, name]) ?? false
    }

    /// The blob, or its snapshot when `snapshot` is given (404 BlobNotFound when there is none).
    func blob(_ container: String, _ name: String, snapshot: String?) async throws -> (ContainerRecord?, BlobRecord?) {
        guard let snapshot else { return try await blob(container, name) }
        return try await read { db in (try Self.container(container, db), try Self.snapshot(container, name, snapshot, db)) }
    }

    /// Snapshot Blob: the blob as it is now, with `metadata` instead of its own when given.
    /// With versioning on, taking a snapshot also starts a new version (as on Azure): the state
    /// snapshotted is kept as a previous version too, and the blob gets a new version id,
    /// which the snapshot carries.
    func snapshotBlob(container: String, name: String, metadata: [(String, String)]?, conditions: WriteConditions) async throws -> BlobRecord {
        let versioning = self.versioning
        let clock = self.clock
        return try await withClonedState(container: container, name: name, conditions: conditions, copies: versioning ? 2 : 1) {
            db, base, extents, clones, now in
            let snapshot = now.iso8601
            if versioning {
                try Self.insertClone(base, extents, clones[1], as: .version, key: base.versionId ?? base.modified.iso8601, metadata: nil, db)
                // A time of its own: a version id is never a snapshot's (they share the table's keys).
                try db.execute(
                    sql: "UPDATE blobs SET versionId = ? WHERE container = ? AND name = ?", arguments: [clock.now().iso8601, container, name])
            }
            try Self.insertClone(base, extents, clones[0], as: .snapshot, key: snapshot, metadata: metadata, db)
            return try Self.snapshot(container, name, snapshot, db)!
        }
    }

    /// Clones the current blob's byte objects (off the writer: file work never runs in a
    /// transaction), then runs `body` in a transaction in which the blob is still the one
    /// cloned, with the clones by original id. The clones are dropped if the blob changed
    /// meanwhile, and the whole is tried again (8 times, then 503).
    func withClonedState<T: Sendable>(
        container: String, name: String, conditions: WriteConditions, copies: Int = 1,
        _ body: @escaping @Sendable (Database, BlobRecord, [PageExtent], [[String: String]], EdmDateTime) throws -> T
    ) async throws -> T {
        let bytes = self.bytes
        for _ in 0..<8 {
            let now = clock.now()
            let (base, extents) = try await read { db -> (BlobRecord, [PageExtent]) in
                guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
                guard let base = try Self.blob(container, name, db) else { throw Self.blobNotFound }
                try conditions.check(existing: base, db, now: now)
                return (base, base.type == .page ? try Self.pages(container, name, db) : [])
            }
            let sources = (base.data.isEmpty ? [] : [base.data]) + extents.filter { !$0.isCleared }.map(\.data)
            let clones = try await BlockingPool.run { () -> [[String: String]] in
                var made: [[String: String]] = []
                do {
                    for _ in 0..<copies {
                        var copy: [String: String] = [:]
                        made.append([:])
                        for id in sources where copy[id] == nil {
                            copy[id] = try bytes.clone(id)
                            made[made.count - 1] = copy
                        }
                    }
                } catch {
                    for id in made.flatMap(\.values) { bytes.delete(id) }
                    throw error
                }
                return made
            }
            let done = try await write { db -> T? in
                guard let current = try Self.blob(container, name, db), current.etag == base.etag, current.data == base.data,
                    try Self.pages(container, name, db) == extents
                else { return nil }
                try conditions.check(existing: current, db, now: now)
                return try body(db, current, extents, clones, now)
            }
            if let done { return done }
            await deleteBytes(clones.flatMap(\.values))
        }
        throw ServiceError(503, .serverBusy, "The server is busy: the blob kept changing while its state was kept; try again.")
    }

    /// Keeps the current blob as a retired state whose byte objects are `clones` of its own
    /// (a page blob's extents remember the object each was cloned from, for diffs).
    static func insertClone(
        _ base: BlobRecord, _ extents: [PageExtent], _ clones: [String: String], as kind: BlobRecord.RetiredKind, key: String,
        metadata: [(String, String)]?, _ db: Database
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO snapshots (container, name, snapshot, kind, versionId, \(Self.snapshotColumns))
                SELECT container, name, ?, ?, versionId, \(Self.snapshotColumns) FROM blobs WHERE container = ? AND name = ?
                """, arguments: [key, kind.rawValue, base.container, base.name])
        try db.execute(
            sql: "UPDATE snapshots SET data = ?, metadata = ? WHERE container = ? AND name = ? AND snapshot = ? AND kind = ?",
            arguments: [clones[base.data] ?? "", MetadataCoding.encode(metadata ?? base.metadata), base.container, base.name, key, kind.rawValue])
        for extent in extents {
            try db.execute(
                sql: """
                    INSERT INTO snapshot_pages (container, blob, snapshot, kind, start, "end", data, dataOffset, origin)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    base.container, base.name, key, kind.rawValue, extent.start, extent.end, clones[extent.data] ?? "", extent.dataOffset,
                    extent.data,
                ])
        }
    }

    /// Deletes the snapshots of a blob (one, or all, soft-deleted ones too), returning the byte
    /// objects they held. Its versions stay.
    static func removeSnapshots(_ container: String, _ name: String, only snapshot: String? = nil, _ db: Database) throws -> [String] {
        try removeRetired(container, name, kind: .snapshot, only: snapshot, db)
    }

    /// Deletes retired states of a blob of one kind (one, or all), returning their byte objects.
    static func removeRetired(_ container: String, _ name: String, kind: BlobRecord.RetiredKind, only snapshot: String? = nil, _ db: Database)
        throws -> [String]
    {
        let filter = (snapshot == nil ? "" : " AND snapshot = ?") + " AND kind = '\(kind.rawValue)'"
        var arguments: StatementArguments = [container, name]
        if let snapshot { arguments += [snapshot] }
        let ids =
            try String.fetchAll(
                db, sql: "SELECT data FROM snapshots WHERE container = ? AND name = ?\(filter)", arguments: arguments)
            + String.fetchAll(db, sql: "SELECT data FROM snapshot_pages WHERE container = ? AND blob = ?\(filter)", arguments: arguments)
        try db.execute(sql: "DELETE FROM snapshots WHERE container = ? AND name = ?\(filter)", arguments: arguments)
        try db.execute(sql: "DELETE FROM snapshot_pages WHERE container = ? AND blob = ?\(filter)", arguments: arguments)
        return ids.filter { !$0.isEmpty }
    }

    /// Delete Blob with `?snapshot=`: that snapshot only — soft-deleted when the soft delete
    /// policy is on; `permanent` (`deletetype=permanent`) removes a soft-deleted one for good.
    func deleteSnapshot(container: String, name: String, snapshot: String, permanent: Bool = false) async throws {
        let now = clock.now()
        let freed = try await write { db -> [String] in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            let policy = try Self.deletePolicy(db)
            if permanent {
                let deletedAt = try Int64.fetchOne(
                    db, sql: "SELECT deletedAt FROM snapshots WHERE container = ? AND name = ? AND snapshot = ? AND kind = 'snapshot'",
                    arguments: [container, name, snapshot])
                guard policy?.allowPermanentDelete == true, deletedAt != nil else { throw Self.permanentDeleteRefused }
                return try Self.removeSnapshots(container, name, only: snapshot, db)
            }
            guard try Self.snapshot(container, name, snapshot, db) != nil else { throw Self.blobNotFound }
            if policy != nil {
                try db.execute(
                    sql: "UPDATE snapshots SET deletedAt = ? WHERE container = ? AND name = ? AND snapshot = ? AND kind = 'snapshot'",
                    arguments: [now.ticks, container, name, snapshot])
                return []
            }
            return try Self.removeSnapshots(container, name, only: snapshot, db)
        }
        await deleteBytes(freed)
    }

    /// The snapshots of the blobs `names`, by name, oldest first.
    func snapshots(container: String, names: [String]) async throws -> [String: [BlobRecord]] {
        guard !names.isEmpty else { return [:] }
        return try await read { db in
            var found: [String: [BlobRecord]] = [:]
            for name in names {
                let rows = try Row.fetchAll(
                    db, sql: "SELECT * FROM snapshots WHERE container = ? AND name = ? AND kind = 'snapshot' AND deletedAt IS NULL ORDER BY snapshot",
                    arguments: [container, name])
                if !rows.isEmpty { found[name] = rows.map(BlobRecord.init(row:)) }
            }
            return found
        }
    }

    /// The extents a page range diff compares, each named by the object it came from: the
    /// blob's (or snapshot `snapshot`'s) and snapshot `previous`'s.
    func pageDiffExtents(container: String, name: String, snapshot: String?, previous: String) async throws
        -> (BlobRecord, current: [PageExtent], previous: [PageExtent])
    {
        try await read { db in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            let record = try snapshot.map { try Self.snapshot(container, name, $0, db) } ?? Self.blob(container, name, db)
            guard let record else { throw Self.blobNotFound }
            guard record.type == .page else { throw Self.invalidBlobType }
            guard try Self.snapshot(container, name, previous, db) != nil else {
                throw ServiceError(409, .previousSnapshotNotFound, "The previous snapshot is not found.")
            }
            guard snapshot.map({ previous < $0 }) ?? true else {
                throw ServiceError(
                    409, .previousSnapshotCannotBeNewer, "The prevsnapshot query parameter value cannot be newer than snapshot query parameter value."
                )
            }
            func named(_ pairs: [(PageExtent, String)]) -> [PageExtent] {
                pairs.map { PageExtent(start: $0.0.start, end: $0.0.end, data: $0.1, dataOffset: $0.0.dataOffset) }
            }
            let current = try snapshot.map { named(try Self.snapshotPages(container, name, $0, db)) } ?? Self.pages(container, name, db)
            return (record, current, named(try Self.snapshotPages(container, name, previous, db)))
        }
    }

    /// A snapshot's extents, for Get Page Ranges on it.
    func snapshotExtents(container: String, name: String, snapshot: String) async throws -> [PageExtent] {
        try await read { db in try Self.snapshotPages(container, name, snapshot, db).map(\.0) }
    }
}
