import Foundation
import GRDB
import StorageProtocol

/// One entity write, as a single request or one operation of a `$batch`.
enum EntityOperation: Sendable {
    /// POST: fails when the entity exists.
    case insert(TableEntity)
    /// PUT: replace; with no `If-Match` it inserts when absent.
    case replace(TableEntity, ifMatch: String?)
    /// MERGE / PATCH: merge properties; with no `If-Match` it inserts when absent.
    case merge(TableEntity, ifMatch: String?)
    case delete(partitionKey: String, rowKey: String, ifMatch: String)

    var partitionKey: String {
        switch self {
        case .insert(let e), .replace(let e, _), .merge(let e, _): e.partitionKey
        case .delete(let pk, _, _): pk
        }
    }

    var rowKey: String {
        switch self {
        case .insert(let e), .replace(let e, _), .merge(let e, _): e.rowKey
        case .delete(_, let rk, _): rk
        }
    }
}

extension EmulatorStore {
    static let tableNotFound = ServiceError(404, .tableNotFound, "The table specified does not exist.")
    static let entityNotFound = ServiceError(404, .resourceNotFound, "The specified resource does not exist.")
    static let conditionNotMet = ServiceError(412, .updateConditionNotSatisfied, "The update condition specified in the request was not satisfied.")

    /// Table names are case-insensitive; rows are keyed by the lower-cased name.
    static func tableKey(_ name: String) -> String { name.lowercased() }

    static func tableName(_ name: String, _ db: Database) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT name FROM tables WHERE key = ?"), arguments: [tableKey(name)])
    }

    /// A table's signed identifiers as last set (empty when none were).
    func tableACL(_ name: String) async throws -> String {
        try await read { db in
            guard let acl = try String.fetchOne(db, sql: "SELECT acl FROM tables WHERE key = ?", arguments: [Self.tableKey(name)]) else {
                throw Self.tableNotFound
            }
            return acl
        }
    }

    func setTableACL(_ name: String, acl: String) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE tables SET acl = ? WHERE key = ?", arguments: [acl, Self.tableKey(name)])
            guard db.changesCount > 0 else { throw Self.tableNotFound }
        }
    }

    func createTable(_ name: String) async throws {
        try await write { db in
            if try Self.tableName(name, db) != nil {
                throw ServiceError(409, .tableAlreadyExists, "The table specified already exists.")
            }
            try db.execute(sql: "INSERT INTO tables (key, name) VALUES (?, ?)", arguments: [Self.tableKey(name), name])
        }
    }

    func deleteTable(_ name: String) async throws {
        try await write { db in
            guard try Self.tableName(name, db) != nil else { throw Self.entityNotFound }
            try db.execute(sql: "DELETE FROM entities WHERE tableKey = ?", arguments: [Self.tableKey(name)])
            try db.execute(sql: "DELETE FROM tables WHERE key = ?", arguments: [Self.tableKey(name)])
        }
    }

    /// Table names in order after `after` (exclusive), up to `limit` rows scanned.
    func tables(after: String?, limit: Int) async throws -> [String] {
        try await read { db in
            try String.fetchAll(
                // The metrics tables (`$Metrics…`) are not listed, as on Azure.
                db, sql: "SELECT name FROM tables WHERE key > ? AND substr(name, 1, 1) != '$' ORDER BY key LIMIT ?",
                arguments: [after.map(Self.tableKey) ?? "", limit])
        }
    }

    func tableExists(_ name: String) async throws -> Bool {
        try await read { db in try Self.tableName(name, db) != nil }
    }

    static func decodeEntity(_ row: Row) throws -> StoredEntity {
        let body: Data = row["body"]
        // The body holds the properties; the keys are the row's own columns.
        let decoded = try EntityJSONReader.entity(body, keys: (row["pk"], row["rk"]))
        return StoredEntity(entity: decoded.entity, timestamp: EdmDateTime(ticks: row["timestamp"]))
    }

    static func entity(_ tableKey: String, _ pk: String, _ rk: String, _ db: Database) throws -> StoredEntity? {
        // Cached statements: compiling SQL per entity was a measurable share of a batch.
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT pk, rk, timestamp, body FROM entities WHERE tableKey = ? AND pk = ? AND rk = ?"),
            arguments: [tableKey, pk, rk]
        ).map(decodeEntity)
    }

    /// The Timestamp of an entity, nil when there is none: all a write on an ETag needs.
    static func timestamp(_ tableKey: String, _ pk: String, _ rk: String, _ db: Database) throws -> EdmDateTime? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT timestamp FROM entities WHERE tableKey = ? AND pk = ? AND rk = ?"), arguments: [tableKey, pk, rk]
        ).map { EdmDateTime(ticks: $0) }
    }

    func entity(table: String, partitionKey: String, rowKey: String) async throws -> StoredEntity {
        try await read { db in
            guard try Self.tableName(table, db) != nil else { throw Self.tableNotFound }
            guard let found = try Self.entity(Self.tableKey(table), partitionKey, rowKey, db) else { throw Self.entityNotFound }
            return found
        }
    }

    /// Applies entity operations in one transaction: all of them, or (on the first failure,
    /// thrown with its index) none.
    func apply(_ operations: [EntityOperation], table: String) async throws -> [StoredEntity?] {
        let clock = self.clock
        return try await write { db in
            guard try Self.tableName(table, db) != nil else { throw IndexedServiceError(index: 0, error: Self.tableNotFound) }
            let key = Self.tableKey(table)
            var results: [StoredEntity?] = []
            for (index, operation) in operations.enumerated() {
                do {
                    results.append(try Self.apply(operation, tableKey: key, now: clock.now(), db))
                } catch let error as ServiceError {
                    throw IndexedServiceError(index: index, error: error)
                }
            }
            return results
        }
    }

    private static func apply(_ operation: EntityOperation, tableKey: String, now: EdmDateTime, _ db: Database) throws -> StoredEntity? {
        if case .insert(let e) = operation {
            // An insert needs no read first: the key's uniqueness refuses a second one (the
            // statement fails alone; the batch's savepoint then undoes the rest). A read and a
            // decode per insert were a twentieth of the emulator's time when seeding.
            do {
                try db.cachedStatement(sql: "INSERT INTO entities (tableKey, pk, rk, timestamp, body) VALUES (?, ?, ?, ?, ?)")
                    .execute(arguments: [tableKey, e.partitionKey, e.rowKey, now.ticks, Data(EntityJSONEncoder.encodeProperties(e))])
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw ServiceError(409, .entityAlreadyExists, "The specified entity already exists.")
            }
            return StoredEntity(entity: e, timestamp: now)
        }
        // A replace or delete on an ETag this store wrote: one statement conditional on the
        // Timestamp it names. The read before it and a second statement were a sixth of the
        // emulator's time in a migration; the row is read only to tell 404 from 412.
        switch operation {
        case .replace(let e, let ifMatch?) where ifMatch != "*":
            if let stamp = StoredEntity.timestamp(ofETag: ifMatch) {
                try db.cachedStatement(sql: "UPDATE entities SET timestamp = ?, body = ? WHERE tableKey = ? AND pk = ? AND rk = ? AND timestamp = ?")
                    .execute(arguments: [now.ticks, Data(EntityJSONEncoder.encodeProperties(e)), tableKey, e.partitionKey, e.rowKey, stamp.ticks])
                if db.changesCount == 1 { return StoredEntity(entity: e, timestamp: now) }
            }
            throw try timestamp(tableKey, e.partitionKey, e.rowKey, db) == nil ? entityNotFound : conditionNotMet
        case .delete(let pk, let rk, let ifMatch) where ifMatch != "*":
            if let stamp = StoredEntity.timestamp(ofETag: ifMatch) {
                try db.cachedStatement(sql: "DELETE FROM entities WHERE tableKey = ? AND pk = ? AND rk = ? AND timestamp = ?")
                    .execute(arguments: [tableKey, pk, rk, stamp.ticks])
                if db.changesCount == 1 { return nil }
            }
            throw try timestamp(tableKey, pk, rk, db) == nil ? entityNotFound : conditionNotMet
        default: break
        }
        // Only a merge needs the stored properties; a replace or delete on an ETag needs the
        // row's Timestamp, and a replace with no condition nothing (decoding the row for
        // them was a twentieth of the emulator's time in a migration).
        var existing: StoredEntity?
        var stamp: EdmDateTime?
        switch operation {
        case .merge:
            existing = try entity(tableKey, operation.partitionKey, operation.rowKey, db)
            stamp = existing?.timestamp
        case .replace(_, nil): break
        default: stamp = try timestamp(tableKey, operation.partitionKey, operation.rowKey, db)
        }
        func checkETag(_ ifMatch: String?) throws {
            guard let ifMatch else { return }
            guard let stamp else { throw entityNotFound }
            if ifMatch != "*" && !ifMatch.isExactly(StoredEntity.etag(stamp)) { throw conditionNotMet }
        }
        let result: TableEntity
        switch operation {
        case .insert(let e):
            if stamp != nil { throw ServiceError(409, .entityAlreadyExists, "The specified entity already exists.") }
            result = e
        case .replace(let e, let ifMatch):
            try checkETag(ifMatch)
            result = e
        case .merge(let e, let ifMatch):
            try checkETag(ifMatch)
            var merged = existing?.entity ?? TableEntity(partitionKey: e.partitionKey, rowKey: e.rowKey)
            for (name, value) in e.properties { merged.properties[name] = value }
            // A merge can grow an entity past the property count or size an insert could not have.
            guard merged.properties.count <= StorageNames.maxProperties else { throw EntityRules.tooManyProperties }
            try EntityRules.checkSize(merged)
            result = merged
        case .delete(let pk, let rk, let ifMatch):
            try checkETag(ifMatch)
            try db.cachedStatement(sql: "DELETE FROM entities WHERE tableKey = ? AND pk = ? AND rk = ?").execute(arguments: [tableKey, pk, rk])
            return nil
        }
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO entities (tableKey, pk, rk, timestamp, body) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [tableKey, result.partitionKey, result.rowKey, now.ticks, Data(EntityJSONEncoder.encodeProperties(result))])
        return StoredEntity(entity: result, timestamp: now)
    }

    /// Entities of a table in key order strictly after `after`, optionally of one partition,
    /// at most `limit` rows.
    /// `from`: the first key a scan may return (inclusive; a table SAS's range start), used
    /// when `after` is nil. `keysOnly`: the rows' bodies are left empty, unread (a keys-only
    /// `$select` whose filter names only keys).
    func scanEntities(
        table: String, partition: String?, after: (String, String)?, from: (pk: String, rk: String?)? = nil, limit: Int, keysOnly: Bool = false
    ) async throws -> [StoredRow] {
        try await read { db in
            guard try Self.tableName(table, db) != nil else { throw Self.tableNotFound }
            var sql =
                keysOnly
                ? "SELECT pk, rk, timestamp FROM entities WHERE tableKey = ?" : "SELECT pk, rk, timestamp, body FROM entities WHERE tableKey = ?"
            var arguments: StatementArguments = [Self.tableKey(table)]
            // Written so SQLite walks the primary key in order: a row value `(pk, rk) > (?, ?)`
            // next to `pk = ?` made it sort the rest of the partition for every page.
            if let partition {
                sql += " AND pk = ?"
                arguments += [partition]
                if let after {
                    // Byte order, as SQLite compares the keys (Swift's `<` on String does not).
                    if partition.utf8.lexicographicallyPrecedes(after.0.utf8) { return [] }
                    if after.0.isExactly(partition) {
                        sql += " AND rk > ?"
                        arguments += [after.1]
                    }
                } else if let from, let rk = from.rk, from.pk.isExactly(partition) {
                    sql += " AND rk >= ?"
                    arguments += [rk]
                }
            } else if let after {
                sql += " AND (pk, rk) > (?, ?)"
                arguments += [after.0, after.1]
            } else if let from {
                if let rk = from.rk {
                    sql += " AND (pk, rk) >= (?, ?)"
                    arguments += [from.pk, rk]
                } else {
                    sql += " AND pk >= ?"
                    arguments += [from.pk]
                }
            }
            sql += " ORDER BY pk, rk LIMIT ?"
            arguments += [limit]
            // A cursor, not `fetchAll`: each row's columns are read once, the body's bytes
            // without an intermediate `Data`.
            var rows: [StoredRow] = []
            rows.reserveCapacity(min(limit, 1000))
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try cursor.next() {
                let body = keysOnly ? [] : try row.withUnsafeData(atIndex: 3) { data in data.map { [UInt8]($0) } ?? [] }
                rows.append(StoredRow(partitionKey: row[0], rowKey: row[1], timestamp: EdmDateTime(ticks: row[2]), body: body))
            }
            return rows
        }
    }
}

/// A failure of one operation among several, with its 0-based index (for `$batch` messages).
struct IndexedServiceError: Error, Sendable {
    var index: Int
    var error: ServiceError
}
