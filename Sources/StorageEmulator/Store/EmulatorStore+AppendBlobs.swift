import Foundation
import GRDB
import StorageProtocol

/// Append blobs. Byte objects are never changed once written (a reader keeps what it opened),
/// so Append Block makes a new object of the blob's bytes and the block and swaps it in. The
/// new object is composed — it refers to the blob's pieces and the block (hard links on disk,
/// shared buffers in memory) — so an append costs the same whatever the blob's size; only
/// every few hundredth append, when the pieces run out, copies the blob once (a step at a
/// time, ``concatenateInSteps``). An append blob is bounded as a committed block blob is
/// (`--max-committed-blob-mib`).
extension EmulatorStore {
    /// Azure's limit on the blocks of an append blob.
    static let maxAppendBlocks = 50_000

    /// Appends `upload` to the append blob `name`; returns the blob and the offset the block
    /// went to. Concurrent appends are taken one after another, as on Azure. The upload stays
    /// the caller's to release (its bytes are copied, not claimed).
    /// `tooLarge` is the answer when the blob would grow past `maxSize` (the caller words it, naming its setting).
    func appendBlock(
        container: String, name: String, upload: StagedUpload, conditions: WriteConditions, maxSize: Int,
        tooLarge: @escaping @Sendable (Int) -> ServiceError
    ) async throws -> (BlobRecord, Int) {
        // One append per blob at a time in this process; the ETag check below still guards
        // against any other writer of the blob (a Put Blob over it).
        try await appends.withLock(container + "\u{0}" + name) {
            try await appendInTurn(container: container, name: name, upload: upload, conditions: conditions, maxSize: maxSize, tooLarge: tooLarge)
        }
    }

    private func appendInTurn(
        container: String, name: String, upload: StagedUpload, conditions: WriteConditions, maxSize: Int,
        tooLarge: @Sendable (Int) -> ServiceError
    ) async throws -> (BlobRecord, Int) {
        let now = clock.now()
        for _ in 0..<16 {
            let current = try await read { db -> BlobRecord in
                try Self.appendable(container, name, conditions, upload.size, db, now: now)
            }
            if current.size + upload.size > maxSize { throw tooLarge(current.size + upload.size) }
            let merged: String
            do {
                merged = try await bytes.appending((current.data, current.size), (upload.id, upload.size))
            } catch {
                // Replaced (and freed) by another writer since it was read: read it again.
                continue
            }
            let outcome: (BlobRecord, String)?
            do {
                outcome = try await write { db -> (BlobRecord, String)? in
                    let again = try Self.appendable(container, name, conditions, upload.size, db, now: now)
                    // Another append came first: append again to what is there now.
                    guard again.etag == current.etag, again.data == current.data else { return nil }
                    try db.execute(
                        sql:
                            "UPDATE blobs SET data = ?, size = ?, appendCount = appendCount + 1, modified = ?, etag = ? WHERE container = ? AND name = ?",
                        arguments: [merged, current.size + upload.size, now.ticks, ServerClock.etag(now), container, name])
                    return (try Self.blob(container, name, db)!, current.data)
                }
            } catch {
                await deleteBytes([merged])
                throw error
            }
            guard let (record, replaced) = outcome else {
                await deleteBytes([merged])
                continue
            }
            await deleteBytes([replaced])
            return (record, current.size)
        }
        throw ServiceError(503, .serverBusy, "The server is busy: too many concurrent appends to this blob; try again.")
    }

    /// The append blob `name` when a block of `adding` bytes may be appended to it now.
    private static func appendable(
        _ container: String, _ name: String, _ conditions: WriteConditions, _ adding: Int, _ db: Database, now: EdmDateTime
    )
        throws -> BlobRecord
    {
        guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
        guard let existing = try Self.blob(container, name, db) else { throw Self.blobNotFound }
        guard existing.type == .append else { throw Self.invalidBlobType }
        guard !existing.sealed else { throw ServiceError(409, .blobIsSealed, "The blob is sealed: it takes no more blocks.") }
        try conditions.check(existing: existing, db, now: now)
        try conditions.checkAppend(size: existing.size, adding: adding)
        guard existing.appendCount < maxAppendBlocks else {
            throw ServiceError(409, .blockCountExceedsLimit, "The committed block count cannot exceed the maximum limit of 50,000 blocks.")
        }
        return existing
    }

    /// Seals an append blob (Append Blob Seal); its ETag and time stay, as on Azure.
    func sealBlob(container: String, name: String, conditions: WriteConditions) async throws -> BlobRecord {
        let now = clock.now()
        return try await write { db in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            guard let existing = try Self.blob(container, name, db) else { throw Self.blobNotFound }
            guard existing.type == .append else { throw Self.invalidBlobType }
            try conditions.check(existing: existing, db, now: now)
            if let position = conditions.appendPosition, position != existing.size {
                throw ServiceError(412, .appendPositionConditionNotMet, "The append position condition specified was not met.")
            }
            try db.execute(sql: "UPDATE blobs SET sealed = 1 WHERE container = ? AND name = ?", arguments: [container, name])
            return try Self.blob(container, name, db)!
        }
    }
}

extension ByteStore {
    /// A new object holding `blob`'s bytes followed by `block`'s (whole objects and their
    /// sizes), composed without copying where the store can; both stay as they were.
    func appending(_ blob: (id: String, size: Int), _ block: (id: String, size: Int)) async throws -> String {
        let pieces = [(id: blob.id, offset: 0, length: blob.size), (id: block.id, offset: 0, length: block.size)].filter { $0.length > 0 }
        guard pieces.count == 1 else { return try await composeFairly(pieces) }
        // The first block of an empty blob (or an empty block): the same bytes, not a copy.
        let only = pieces[0].id
        return try await BlockingPool.run { try self.clone(only) }
    }
}
