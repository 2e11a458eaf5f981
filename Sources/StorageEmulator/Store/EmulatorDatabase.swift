import Foundation
import GRDB
import StorageProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Opens the emulator's SQLite database and brings its schema up to date.
///
/// On disk it runs in WAL mode with `synchronous = FULL`: a write is acknowledged only after
/// its transaction is on disk, so `kill -9` (or a power cut) loses nothing the client was told
/// succeeded. One process owns a data directory (`DataFolderLock`); the busy timeout covers
/// SQLite's own readers and checkpoints inside that process.
///
/// **Layout** (docs/STORAGE.md): 16 KiB pages and incremental auto-vacuum. Entities live in a
/// `WITHOUT ROWID` table keyed by (table, PartitionKey, RowKey) whose body is the properties'
/// JSON without the keys: with 4 KiB pages a SpeakEasy event (~1.3 KB) overflowed the key b-tree's
/// local payload and took a mostly empty overflow page with it (3.4× its JSON on disk); with
/// 16 KiB pages rows up to ~4 KB stay inside their page (1.07× measured, Benchmarks/RESULTS.md).
///
/// **Upgrades**: a folder written by an older azseed is migrated in place — schema migrations
/// in one transaction each, then one `VACUUM` that rewrites the file into the layout (atomic:
/// SQLite's journal makes it all or nothing). A folder whose schema names a migration this
/// azseed does not know was written by a newer one: it is refused before anything is written.
enum EmulatorDatabase {
    /// The page size of every database this emulator writes.
    static let pageSize = 16384

    static func open(directory: URL?) throws -> any DatabaseWriter {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        guard let directory else {
            let queue = try DatabaseQueue(configuration: configuration)
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA page_size = \(pageSize)") }
            try migrator.migrate(queue)
            return queue
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("storage.sqlite").path
        try makePrivate(path)
        try upgrade(path: path, configuration: configuration)
        let pool = try DatabasePool(path: path, configuration: configuration)
        try migrator.migrate(pool)
        return pool
    }

    /// Creates the database file `0600` before SQLite does (SQLite would make it `0644` less the
    /// umask, and gives its `-wal` and `-shm` the database's mode), or takes group and others'
    /// access from one an older azseed made.
    static func makePrivate(_ path: String) throws {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw EmulatorStartError(phrase: "cannot open \(path): \(String(cString: strerror(errno))); check the data folder's permissions")
        }
        defer { close(fd) }
        _ = fchmod(fd, 0o600)
        for suffix in ["-wal", "-shm"] { _ = chmod(path + suffix, 0o600) }
    }

    /// Brings the file at `path` to this version's schema and layout, through a single
    /// connection opened before the pool (the page size cannot change in WAL mode, and VACUUM
    /// needs the only connection). A new file gets the layout before its first table.
    static func upgrade(path: String, configuration: Configuration) throws {
        try refuseNewer(path: path, configuration: configuration)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        do {
            try bringUpToDate(queue)
        } catch let error as DatabaseError where error.resultCode != .SQLITE_NOTADB {
            // Each step is atomic, so what is on disk is whole (the old version, or some
            // migrations further): the next start takes it from there.
            throw EmulatorStartError(
                phrase:
                    "\(path): could not be upgraded to this azseed's storage (SQLite: \(error.message ?? "error \(error.resultCode.rawValue)")); its data is intact. Free disk space (the upgrade needs about twice the file's size) and start again"
            )
        }
    }

    /// Refuses a folder written by a newer azseed before anything is written to it.
    ///
    /// Where a write-ahead log is left beside the file (a newer azseed that stopped without a
    /// checkpoint), the look is through a read-only connection: a read-write one would copy
    /// that log into the file as it closed. Otherwise a read-write connection is the one that
    /// leaves no trace (a read-only one would leave an empty log and its index behind).
    private static func refuseNewer(path: String, configuration: Configuration) throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        var look = configuration
        look.readonly = FileManager.default.fileExists(atPath: path + "-wal")
        // A file SQLite cannot open here is looked at again by the open that follows, which
        // names it in its error.
        guard let queue = try? DatabaseQueue(path: path, configuration: look) else { return }
        defer { try? queue.close() }
        let applied: Set<String>
        do {
            applied = try queue.read { db in
                try db.tableExists("grdb_migrations") ? try migrator.appliedIdentifiers(db) : []
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            return  // not SQLite: the read-write open says so, naming the file
        }
        let unknown = applied.subtracting(migrator.migrations)
        guard unknown.isEmpty else {
            throw EmulatorStartError(
                phrase:
                    "\(path): written by a newer azseed: its schema has \(unknown.sorted().joined(separator: ", ")), which this azseed does not know (it knows up to \(migrator.migrations.last ?? "none")); it was not changed. Open it with that azseed, or pass another \(Setting.dataFolder)"
            )
        }
    }

    /// The migrations this file lacks, then the layout (one VACUUM), each atomic.
    private static func bringUpToDate(_ queue: DatabaseQueue) throws {
        try queue.writeWithoutTransaction { db in
            if try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0 {
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                try db.execute(sql: "PRAGMA page_size = \(pageSize)")
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            }
        }
        try migrator.migrate(queue)
        try queue.writeWithoutTransaction { db in
            let page = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            let vacuum = try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") ?? 0
            guard page != pageSize || vacuum != 2 else { return }
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
            try db.execute(sql: "PRAGMA page_size = \(pageSize)")
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            try db.execute(sql: "VACUUM")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE containers (
                        name TEXT PRIMARY KEY NOT NULL,
                        access TEXT NOT NULL,
                        created INTEGER NOT NULL,
                        modified INTEGER NOT NULL,
                        etag TEXT NOT NULL,
                        metadata TEXT NOT NULL,
                        acl TEXT NOT NULL DEFAULT ''
                    );
                    CREATE TABLE blobs (
                        container TEXT NOT NULL,
                        name TEXT NOT NULL,
                        data TEXT NOT NULL,
                        size INTEGER NOT NULL,
                        contentType TEXT NOT NULL,
                        contentMD5 TEXT,
                        contentEncoding TEXT,
                        contentLanguage TEXT,
                        contentDisposition TEXT,
                        cacheControl TEXT,
                        created INTEGER NOT NULL,
                        modified INTEGER NOT NULL,
                        etag TEXT NOT NULL,
                        metadata TEXT NOT NULL,
                        blocks TEXT NOT NULL DEFAULT '[]',
                        PRIMARY KEY (container, name)
                    ) WITHOUT ROWID;
                    CREATE TABLE blocks (
                        container TEXT NOT NULL,
                        blob TEXT NOT NULL,
                        blockID TEXT NOT NULL,
                        data TEXT NOT NULL,
                        size INTEGER NOT NULL,
                        PRIMARY KEY (container, blob, blockID)
                    ) WITHOUT ROWID;
                    CREATE TABLE tables (
                        key TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL
                    );
                    CREATE TABLE entities (
                        tableKey TEXT NOT NULL,
                        pk TEXT NOT NULL,
                        rk TEXT NOT NULL,
                        timestamp INTEGER NOT NULL,
                        body BLOB NOT NULL,
                        PRIMARY KEY (tableKey, pk, rk)
                    ) WITHOUT ROWID;
                    """)
        }
        // v2: the copy properties a Copy Blob leaves on its destination (Get Blob Properties
        // reports them until a Put Blob, Put Block List or Set Blob Properties replaces them).
        migrator.registerMigration("v2-copy") { db in
            try db.execute(sql: "ALTER TABLE blobs ADD COLUMN copy TEXT")
        }
        // v3: a table's stored access policies (Set Table ACL), kept as sent.
        migrator.registerMigration("v3-table-acl") { db in
            try db.execute(sql: "ALTER TABLE tables ADD COLUMN acl TEXT NOT NULL DEFAULT ''")
        }
        // v4: a blob's access tier once Set Blob Tier chose one (else Hot, inferred).
        migrator.registerMigration("v4-blob-tier") { db in
            try db.execute(sql: "ALTER TABLE blobs ADD COLUMN tier TEXT")
        }
        // v5: Get/Set Service Properties documents (CORS rules among them), per service.
        migrator.registerMigration("v5-service-properties") { db in
            try db.execute(sql: "CREATE TABLE service_properties (service TEXT PRIMARY KEY NOT NULL, xml TEXT NOT NULL)")
        }
        // v6: an entity's body is its properties' JSON without PartitionKey and RowKey (the
        // key columns hold them): small entities no longer store their keys twice. Rows are
        // copied into a new table, rewritten one by one, in this migration's transaction.
        migrator.registerMigration("v6-entity-bodies-without-keys") { db in
            try db.execute(
                sql: """
                    CREATE TABLE entities_v6 (
                        tableKey TEXT NOT NULL,
                        pk TEXT NOT NULL,
                        rk TEXT NOT NULL,
                        timestamp INTEGER NOT NULL,
                        body BLOB NOT NULL,
                        PRIMARY KEY (tableKey, pk, rk)
                    ) WITHOUT ROWID
                    """)
            let insert = try db.makeStatement(sql: "INSERT INTO entities_v6 (tableKey, pk, rk, timestamp, body) VALUES (?, ?, ?, ?, ?)")
            let rows = try Row.fetchCursor(db, sql: "SELECT tableKey, pk, rk, timestamp, body FROM entities")
            while let row = try rows.next() {
                let pk: String = row["pk"]
                let rk: String = row["rk"]
                let entity = try EntityJSONReader.entity(row["body"] as Data, keys: (pk, rk)).entity
                try insert.execute(arguments: [
                    row["tableKey"] as String, pk, rk, row["timestamp"] as Int64, Data(EntityJSONEncoder.encodeProperties(entity)),
                ])
            }
            try db.execute(sql: "DROP TABLE entities")
            try db.execute(sql: "ALTER TABLE entities_v6 RENAME TO entities")
        }
        // v7: blob leases (Lease Blob); no row is an available blob.
        migrator.registerMigration("v7-blob-leases") { db in
            try db.execute(
                sql: """
                    CREATE TABLE leases (
                        container TEXT NOT NULL,
                        blob TEXT NOT NULL,
                        leaseId TEXT NOT NULL,
                        duration INTEGER,
                        expires INTEGER,
                        breakAt INTEGER,
                        broken INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (container, blob)
                    ) WITHOUT ROWID
                    """)
        }
        // v8: append and page blobs. A page blob's bytes are its written ranges (`pages`),
        // each pointing into a byte object; what no range covers reads as zeros.
        migrator.registerMigration("v8-blob-types") { db in
            try db.execute(
                sql: """
                    ALTER TABLE blobs ADD COLUMN type TEXT NOT NULL DEFAULT 'BlockBlob';
                    ALTER TABLE blobs ADD COLUMN sequenceNumber INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE blobs ADD COLUMN sealed INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE blobs ADD COLUMN appendCount INTEGER NOT NULL DEFAULT 0;
                    CREATE TABLE pages (
                        container TEXT NOT NULL,
                        blob TEXT NOT NULL,
                        start INTEGER NOT NULL,
                        "end" INTEGER NOT NULL,
                        data TEXT NOT NULL,
                        dataOffset INTEGER NOT NULL,
                        PRIMARY KEY (container, blob, start)
                    ) WITHOUT ROWID;
                    """)
        }
        // v9: blob snapshots. A snapshot is a row of its own with the blob's columns, its bytes
        // a clone of the blob's (a hard link: objects never change), a page blob's extents in
        // `snapshot_pages` with the id each was cloned from (`origin`), which page range diffs compare.
        migrator.registerMigration("v9-blob-snapshots") { db in
            try db.execute(
                sql: """
                    CREATE TABLE snapshots (
                        container TEXT NOT NULL,
                        name TEXT NOT NULL,
                        snapshot TEXT NOT NULL,
                        data TEXT NOT NULL,
                        size INTEGER NOT NULL,
                        contentType TEXT NOT NULL,
                        contentMD5 TEXT,
                        contentEncoding TEXT,
                        contentLanguage TEXT,
                        contentDisposition TEXT,
                        cacheControl TEXT,
                        created INTEGER NOT NULL,
                        modified INTEGER NOT NULL,
                        etag TEXT NOT NULL,
                        metadata TEXT NOT NULL,
                        blocks TEXT NOT NULL,
                        copy TEXT,
                        tier TEXT,
                        type TEXT NOT NULL,
                        sequenceNumber INTEGER NOT NULL,
                        sealed INTEGER NOT NULL,
                        appendCount INTEGER NOT NULL,
                        PRIMARY KEY (container, name, snapshot)
                    ) WITHOUT ROWID;
                    CREATE TABLE snapshot_pages (
                        container TEXT NOT NULL,
                        blob TEXT NOT NULL,
                        snapshot TEXT NOT NULL,
                        start INTEGER NOT NULL,
                        "end" INTEGER NOT NULL,
                        data TEXT NOT NULL,
                        dataOffset INTEGER NOT NULL,
                        origin TEXT NOT NULL,
                        PRIMARY KEY (container, blob, snapshot, start)
                    ) WITHOUT ROWID;
                    """)
        }
        // v10: the Archive tier and rehydration: where a pending rehydration goes, at what
        // priority, when it is done; when the tier last changed.
        migrator.registerMigration("v10-archive") { db in
            try db.execute(
                sql: """
                    ALTER TABLE blobs ADD COLUMN rehydrateTo TEXT;
                    ALTER TABLE blobs ADD COLUMN rehydratePriority TEXT;
                    ALTER TABLE blobs ADD COLUMN rehydrateAt INTEGER;
                    ALTER TABLE blobs ADD COLUMN tierChanged INTEGER;
                    """)
        }
        // v11: blob index tags, stored as the metadata is.
        migrator.registerMigration("v11-blob-tags") { db in
            try db.execute(
                sql: """
                    ALTER TABLE blobs ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
                    ALTER TABLE snapshots ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
                    """)
        }
        // v12: blob versions and soft delete. The `snapshots` table holds every state of a blob
        // that is not its current one: snapshots, previous versions (`kind` version, keyed by
        // version id) and a soft-deleted blob (`kind` base, key ''); `deletedAt` marks a
        // soft-deleted one. The current blob's version id is in `blobs.versionId`. The `$logs`
        // system container every account has. Encryption: a customer-provided key's SHA-256 (of a
        // blob, a retired state, a staged block), a blob's encryption scope, a container's
        // default scope and whether writes may name another.
        migrator.registerMigration("v12-versions-soft-delete") { db in
            try db.execute(
                sql: """
                    ALTER TABLE blobs ADD COLUMN versionId TEXT;
                    ALTER TABLE snapshots ADD COLUMN kind TEXT NOT NULL DEFAULT 'snapshot';
                    ALTER TABLE snapshots ADD COLUMN deletedAt INTEGER;
                    ALTER TABLE snapshots ADD COLUMN versionId TEXT;
                    ALTER TABLE snapshot_pages ADD COLUMN kind TEXT NOT NULL DEFAULT 'snapshot';
                    ALTER TABLE blobs ADD COLUMN keySHA256 TEXT;
                    ALTER TABLE blobs ADD COLUMN encryptionScope TEXT;
                    ALTER TABLE snapshots ADD COLUMN keySHA256 TEXT;
                    ALTER TABLE snapshots ADD COLUMN encryptionScope TEXT;
                    ALTER TABLE blocks ADD COLUMN keySHA256 TEXT;
                    ALTER TABLE blocks ADD COLUMN encryptionScope TEXT;
                    ALTER TABLE containers ADD COLUMN defaultEncryptionScope TEXT;
                    ALTER TABLE containers ADD COLUMN denyEncryptionScopeOverride INTEGER NOT NULL DEFAULT 0;
                    INSERT OR IGNORE INTO containers (name, access, created, modified, etag, metadata)
                        SELECT '$logs', '', t, t, printf('"0x%X"', t), '[]'
                        FROM (SELECT CAST(strftime('%s', 'now') AS INTEGER) * 10000000 + 621355968000000000 AS t);
                    """)
        }
        // v13: container soft delete. A deleted container's rows (its own and its blobs', in every
        // table) move to an internal name no request can spell (``EmulatorStore/deletedName(_:_:)``);
        // the container row keeps the name it had, its version, when it was deleted and until
        // when it is kept (the retention in force then: switching the setting off later keeps it).
        migrator.registerMigration("v13-container-soft-delete") { db in
            try db.execute(
                sql: """
                    ALTER TABLE containers ADD COLUMN deletedName TEXT;
                    ALTER TABLE containers ADD COLUMN deletedVersion TEXT;
                    ALTER TABLE containers ADD COLUMN deletedAt INTEGER;
                    ALTER TABLE containers ADD COLUMN deletedUntil INTEGER;
                    """)
        }
        // v14: a blob committed from its blocks may be a composed object (a folder of links to
        // the blocks' files, `ComposedBytes.swift`) that an older azseed could not read. Nothing
        // in the database changes; the name tells an older azseed the folder is not its own.
        migrator.registerMigration("v14-composed-blobs") { _ in }
        return migrator
    }
}
