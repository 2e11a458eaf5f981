import Foundation
import GRDB

/// Opens the emulator's SQLite database and brings its schema up to date.
///
/// On disk it runs in WAL mode with `synchronous = FULL`: a write is acknowledged only after
/// its transaction is on disk, so `kill -9` (or a power cut) loses nothing the client was told
/// succeeded. One process owns a data directory (`DataFolderLock`); the busy timeout covers
/// SQLite's own readers and checkpoints inside that process.
enum EmulatorDatabase {
    static func open(directory: URL?) throws -> any DatabaseWriter {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let writer: any DatabaseWriter
        if let directory {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            writer = try DatabasePool(path: directory.appendingPathComponent("storage.sqlite").path, configuration: configuration)
        } else {
            writer = try DatabaseQueue(configuration: configuration)
        }
        try migrator.migrate(writer)
        return writer
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
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
        return migrator
    }
}
