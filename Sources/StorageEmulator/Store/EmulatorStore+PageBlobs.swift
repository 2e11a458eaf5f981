import Foundation
import GRDB
import StorageProtocol

/// Page blobs: written in 512-byte pages, stored sparsely as extents (`pages`), each a range
/// of a byte object; what no extent covers reads as zeros (docs/PROTOCOL.md §7).
extension EmulatorStore {
    static let invalidBlobType = ServiceError(409, .invalidBlobType, "The blob type is invalid for this operation.")

    static func pages(_ container: String, _ name: String, _ db: Database) throws -> [PageExtent] {
        try Row.fetchAll(
            db, sql: "SELECT start, \"end\", data, dataOffset FROM pages WHERE container = ? AND blob = ? ORDER BY start",
            arguments: [container, name]
        ).map { PageExtent(start: $0["start"], end: $0["end"], data: $0["data"], dataOffset: $0["dataOffset"]) }
    }

    static func insertPages(_ extents: [PageExtent], _ container: String, _ name: String, _ db: Database) throws {
        for extent in extents {
            try db.execute(
                sql: "INSERT INTO pages (container, blob, start, \"end\", data, dataOffset) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [container, name, extent.start, extent.end, extent.data, extent.dataOffset])
        }
    }

    /// Replaces the extents overlapping `lower..<upper` with `replacement` (those extents cut to
    /// what lies outside the range, plus what was written); returns the byte objects no extent
    /// of the blob refers to any more.
    private static func replacePages(
        _ container: String, _ name: String, _ lower: Int, _ upper: Int, written: PageExtent?, markCleared: Bool = false, _ db: Database
    ) throws -> [String] {
        let overlapping = try Row.fetchAll(
            db,
            sql: "SELECT start, \"end\", data, dataOffset FROM pages WHERE container = ? AND blob = ? AND start < ? AND \"end\" > ? ORDER BY start",
            arguments: [container, name, upper, lower]
        ).map { PageExtent(start: $0["start"], end: $0["end"], data: $0["data"], dataOffset: $0["dataOffset"]) }
        var after = PageExtents.removing(lower, upper, from: overlapping)
        if let written { after = PageExtents.writing(written, into: after) }
        if markCleared {
            // What was written there reads as cleared, for a diff against an earlier snapshot.
            for extent in overlapping {
                guard let part = extent.clipped(to: lower, upper) else { continue }
                after = PageExtents.writing(PageExtent(start: part.start, end: part.end, data: "", dataOffset: 0), into: after)
            }
        }
        try db.execute(
            sql: "DELETE FROM pages WHERE container = ? AND blob = ? AND start < ? AND \"end\" > ?", arguments: [container, name, upper, lower])
        try insertPages(after, container, name, db)
        var freed: [String] = []
        for id in PageExtents.freed(before: overlapping, after: after) {
            let used = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM pages WHERE container = ? AND blob = ? AND data = ?)", arguments: [container, name, id])
            if used != true { freed.append(id) }
        }
        return freed
    }

    /// The page blob `name`, checked against `conditions` (its sequence number too) in `db`.
    private static func pageBlob(_ container: String, _ name: String, _ conditions: WriteConditions, _ db: Database, now: EdmDateTime) throws
        -> BlobRecord
    {
        guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
        guard let existing = try Self.blob(container, name, db) else { throw Self.blobNotFound }
        guard existing.type == .page else { throw Self.invalidBlobType }
        try conditions.check(existing: existing, db, now: now)
        try conditions.checkSequenceNumber(existing.sequenceNumber)
        return existing
    }

    private static func touch(_ container: String, _ name: String, _ db: Database, now: EdmDateTime) throws -> BlobRecord {
        try db.execute(
            sql: "UPDATE blobs SET modified = ?, etag = ? WHERE container = ? AND name = ?",
            arguments: [now.ticks, ServerClock.etag(now), container, name])
        return try Self.blob(container, name, db)!
    }

    /// Put Page (`upload` the pages' bytes) or Clear Pages (`upload` nil) on `start..<end`.
    func writePages(container: String, name: String, start: Int, end: Int, upload: StagedUpload?, conditions: WriteConditions) async throws
        -> BlobRecord
    {
        let now = clock.now()
        let outcome: (BlobRecord, [String])
        do {
            outcome = try await write { db in
                let existing = try Self.pageBlob(container, name, conditions, db, now: now)
                guard end <= existing.size else {
                    throw ServiceError(416, .invalidPageRange, "The page range specified is invalid.")
                }
                let written = PageExtent(start: start, end: end, data: upload?.id ?? "", dataOffset: 0)
                let freed = try Self.replacePages(container, name, start, end, written: written, db)
                return (try Self.touch(container, name, db, now: now), freed)
            }
        } catch {
            if let upload { await deleteBytes([upload.id]) }
            throw error
        }
        upload?.claim()
        await deleteBytes(outcome.1)
        return outcome.0
    }

    /// What Set Blob Properties may change on a page blob besides its HTTP properties.
    enum SequenceNumberAction: Sendable {
        case max(Int64)
        case update(Int64)
        case increment
    }

    /// Resize (`size`) and Update Sequence Number (`action`) of a page blob.
    func changePageBlob(container: String, name: String, size: Int?, action: SequenceNumberAction?, conditions: WriteConditions) async throws
        -> BlobRecord
    {
        let now = clock.now()
        let (record, freed) = try await write { db -> (BlobRecord, [String]) in
            let existing = try Self.pageBlob(container, name, conditions, db, now: now)
            var freed: [String] = []
            if let size {
                freed = try Self.replacePages(container, name, size, Int.max, written: nil, markCleared: true, db)
                try db.execute(sql: "UPDATE blobs SET size = ? WHERE container = ? AND name = ?", arguments: [size, container, name])
            }
            if let action {
                let number: Int64
                switch action {
                case .max(let given): number = Swift.max(existing.sequenceNumber, given)
                case .update(let given): number = given
                case .increment:
                    guard existing.sequenceNumber < Int64.max else {
                        throw ServiceError(
                            409, .sequenceNumberIncrementTooLarge,
                            "The sequence number increment cannot be performed because it would result in overflow of the sequence number.")
                    }
                    number = existing.sequenceNumber + 1
                }
                try db.execute(sql: "UPDATE blobs SET sequenceNumber = ? WHERE container = ? AND name = ?", arguments: [number, container, name])
            }
            return (try Self.touch(container, name, db, now: now), freed)
        }
        await deleteBytes(freed)
        return record
    }

    /// A page blob and its extents, read together.
    func pageRanges(container: String, name: String) async throws -> (BlobRecord, [PageExtent]) {
        try await read { db in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            guard let record = try Self.blob(container, name, db) else { throw Self.blobNotFound }
            guard record.type == .page else { throw Self.invalidBlobType }
            return (record, try Self.pages(container, name, db))
        }
    }

    /// The extents of the page blob `source` copied into new byte objects (Copy Blob of a page
    /// blob: the destination is as sparse as the source). Returns nil when the blob changed
    /// since `source` was read.
    func copyPages(of source: BlobRecord) async throws -> [PageExtent]? {
        let extents = try await read { db -> [PageExtent]? in
            // A snapshot or version never changes: its own extents.
            if let key = source.retiredKey { return try Self.snapshotPages(source.container, source.name, key, db).map(\.0) }
            guard let current = try Self.blob(source.container, source.name, db), current.etag == source.etag else { return nil }
            return try Self.pages(source.container, source.name, db)
        }
        guard let extents else { return nil }
        let bytes = self.bytes
        return try await BlockingPool.run {
            var copied: [PageExtent] = []
            do {
                for extent in extents where !extent.isCleared {
                    let id = try bytes.concatenate([(id: extent.data, offset: extent.dataOffset, length: extent.length)])
                    copied.append(PageExtent(start: extent.start, end: extent.end, data: id, dataOffset: 0))
                }
            } catch {
                for extent in copied { bytes.delete(extent.data) }
                throw error
            }
            return copied
        }
    }
}
