import Foundation
import GRDB
import StorageProtocol

/// Blob index tags: Set Blob Tags (which changes neither ETag nor time, as on Azure) and Find
/// Blobs by Tags.
extension EmulatorStore {
    func setTags(container: String, name: String, tags: BlobTags, conditions: WriteConditions) async throws {
        let now = clock.now()
        try await write { db in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            guard let existing = try Self.blob(container, name, db) else { throw Self.blobNotFound }
            try conditions.check(existing: existing, db, now: now)
            try db.execute(sql: "UPDATE blobs SET tags = ? WHERE container = ? AND name = ?", arguments: [tags.encoded, container, name])
        }
    }

    /// Blobs whose tags satisfy `expression`, in (container, name) order after `marker`
    /// (`container\u{0}name`), at most `limit`; the next marker when more follow. Scans the
    /// blobs with tags a thousand rows at a time.
    func findBlobs(in container: String?, matching expression: TagExpression, after marker: (String, String)?, limit: Int) async throws
        -> ([BlobRecord], (String, String)?)
    {
        var found: [BlobRecord] = []
        var position = marker ?? ("", "")
        var inclusive = marker != nil
        while true {
            let (start, startInclusive) = (position, inclusive)
            let rows = try await read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM blobs WHERE tags != '[]' AND (container > ? OR (container = ? AND name \(startInclusive ? ">=" : ">") ?))
                        \(container == nil ? "AND substr(container, 1, 1) != char(1)" : "AND container = ?") ORDER BY container, name LIMIT 1000
                        """,
                    arguments: StatementArguments([start.0, start.0, start.1] + (container.map { [$0] } ?? []))
                ).map(BlobRecord.init(row:))
            }
            for record in rows {
                guard expression.matches(record.tags, container: record.container) else { continue }
                if found.count == limit { return (found, (record.container, record.name)) }
                found.append(record)
            }
            guard rows.count == 1000, let last = rows.last else { return (found, nil) }
            position = (last.container, last.name)
            inclusive = false
        }
    }
}
