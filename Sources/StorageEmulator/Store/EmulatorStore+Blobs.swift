import Foundation
import GRDB
import StorageProtocol

extension EmulatorStore {
    static let blobNotFound = ServiceError(404, .blobNotFound, "The specified blob does not exist.")

    static func blob(_ container: String, _ name: String, _ db: Database) throws -> BlobRecord? {
        // Cached, as every per-request lookup: compiling it each time was a share of each blob request.
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM blobs WHERE container = ? AND name = ?"), arguments: [container, name]).map(
            BlobRecord.init(row:))
    }

    func blob(_ container: String, _ name: String) async throws -> (ContainerRecord?, BlobRecord?) {
        try await read { db in (try Self.container(container, db), try Self.blob(container, name, db)) }
    }

    /// Stores a whole blob (Put Blob) from an upload already in the byte store, replacing any
    /// blob of that name and its uncommitted blocks.
    func putBlob(
        container: String, name: String, upload: StagedUpload, properties: BlobHTTPProperties,
        metadata: [(String, String)], conditions: WriteConditions, copy: CopyInfo? = nil,
        blocks: [CommittedBlock] = [], type: BlobType = .block, appendCount: Int = 0, sealed: Bool = false, tier: String? = nil,
        tags: BlobTags? = nil
    ) async throws -> BlobRecord {
        let record = try await commitBlob(
            container: container, name: name, dataID: upload.id, size: upload.size, blocks: blocks,
            properties: properties, metadata: metadata, conditions: conditions, copy: copy, type: type,
            appendCount: appendCount, sealed: sealed, tier: tier, tags: tags)
        upload.claim()
        return record
    }

    /// Points a blob at stored bytes in one transaction, then frees what it replaced. A page
    /// blob has no bytes of its own (`dataID` empty, `size` its length): its pages come later,
    /// or are `pages` (a copy's).
    func commitBlob(
        container: String, name: String, dataID: String, size: Int, blocks: [CommittedBlock],
        properties: BlobHTTPProperties, metadata: [(String, String)], conditions: WriteConditions,
        copy: CopyInfo? = nil, type: BlobType = .block, sequenceNumber: Int64 = 0, pages: [PageExtent] = [],
        appendCount: Int = 0, sealed: Bool = false, tier: String? = nil, tags: BlobTags? = nil
    ) async throws -> BlobRecord {
        let now = clock.now()
        let outcome: (BlobRecord, [String])
        do {
            outcome = try await write { db in
                guard let containerRecord = try Self.container(container, db) else { throw Self.containerNotFound }
                let existing = try Self.blob(container, name, db)
                try conditions.check(existing: existing, db, now: now)
                let scope = try Self.encryptionScope(conditions.encryption, in: containerRecord)
                // What it replaces is kept (a version, a soft-deleted snapshot) or freed.
                var freed: [String] = []
                if let existing {
                    freed = try self.retireReplaced(existing, now: now, db)
                } else {
                    try Self.forgetSoftDeletedBase(container, name, now: self.clock.now(), db)
                }
                freed += try Self.removeBytes(of: container, name, db)
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO blobs (container, name, data, size, contentType, contentMD5, contentEncoding,
                            contentLanguage, contentDisposition, cacheControl, created, modified, etag, metadata, blocks, copy,
                            type, sequenceNumber, appendCount, sealed, tier, tierChanged, tags, versionId, keySHA256, encryptionScope)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        container, name, dataID, size, properties.contentType, properties.contentMD5,
                        properties.contentEncoding, properties.contentLanguage, properties.contentDisposition,
                        properties.cacheControl, (existing?.created ?? now).ticks, now.ticks, ServerClock.etag(now),
                        MetadataCoding.encode(metadata), MetadataCoding.encode(blocks.map { ($0.id, String($0.size)) }),
                        copy?.encoded, type.rawValue, sequenceNumber, appendCount, sealed ? 1 : 0, tier, tier == nil ? nil : now.ticks,
                        (tags ?? BlobTags.none).encoded, self.versioning ? now.iso8601 : nil, conditions.encryption.keySHA256, scope,
                    ])
                try Self.insertPages(pages, container, name, db)
                let kept = Set(pages.map(\.data) + [dataID])
                return (try Self.blob(container, name, db)!, freed.filter { !$0.isEmpty && !kept.contains($0) })
            }
        } catch {
            await deleteBytes([dataID])
            throw error
        }
        await deleteBytes(outcome.1)
        return outcome.0
    }

    /// The scope a blob is written with: the write's, else (without a customer key) its
    /// container's default. A container that denies overrides takes only its own.
    static func encryptionScope(_ requested: BlobEncryption, in container: ContainerRecord) throws -> String? {
        if container.denyEncryptionScopeOverride,
            requested.keySHA256 != nil || (requested.scope != nil && requested.scope != container.defaultEncryptionScope)
        {
            throw ServiceError(
                409, .encryptionScopeOverrideNotAllowed,
                "This container's default encryption scope may not be overridden (x-ms-deny-encryption-scope-override).")
        }
        return requested.scope ?? (requested.keySHA256 == nil ? container.defaultEncryptionScope : nil)
    }

    /// Stages a block (Put Block) from an upload; a block with the same id replaces the earlier one.
    /// `encryption`: the customer key or scope it was sent with; the commit must use the same.
    func putBlock(container: String, blob: String, blockID: String, upload: StagedUpload, encryption: BlobEncryption = BlobEncryption()) async throws
    {
        let dataID = upload.id
        let size = upload.size
        let replaced: String?
        do {
            replaced = try await write { db in
                guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
                if let existing = try Self.blob(container, blob, db), existing.type != .block { throw Self.invalidBlobType }
                let old = try String.fetchOne(
                    db, sql: "SELECT data FROM blocks WHERE container = ? AND blob = ? AND blockID = ?",
                    arguments: [container, blob, blockID])
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO blocks (container, blob, blockID, data, size, keySHA256, encryptionScope) VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [container, blob, blockID, dataID, size, encryption.keySHA256, encryption.scope])
                return old
            }
        } catch {
            await deleteBytes([dataID])
            throw error
        }
        upload.claim()
        if let replaced { await deleteBytes([replaced]) }
    }

    /// Which list a Put Block List entry names its block from.
    enum BlockSource: Sendable { case committed, uncommitted, latest }

    /// Commits a block list: the blob becomes the listed blocks in order.
    func putBlockList(
        container: String, name: String, list: [(BlockSource, String)], properties: BlobHTTPProperties,
        metadata: [(String, String)], conditions: WriteConditions, tier: String? = nil, tags: BlobTags? = nil,
        maxSize: Int = .max, tooLarge: @Sendable (Int) -> ServiceError = { _ in ServiceError(413, .requestBodyTooLarge, "The blob is too large.") }
    ) async throws -> BlobRecord {
        let (pieces, blocks) = try await read { db -> ([(id: String, offset: Int, length: Int)], [CommittedBlock]) in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            let staged = try Row.fetchAll(
                db, sql: "SELECT blockID, data, size, keySHA256, encryptionScope FROM blocks WHERE container = ? AND blob = ?",
                arguments: [container, name])
            // Block ids by bytes: an id Azure tells apart is never taken for another.
            var uncommitted: [ExactString: (String, Int)] = [:]
            var keys: [ExactString: BlobEncryption] = [:]
            for row in staged {
                uncommitted[ExactString(row["blockID"])] = (row["data"], row["size"])
                keys[ExactString(row["blockID"])] = BlobEncryption(keySHA256: row["keySHA256"], scope: row["encryptionScope"])
            }
            // Every block committed was sent with the commit's customer key and scope (or none, with none).
            func checkKey(_ used: BlobEncryption) throws {
                guard used.keySHA256 == conditions.encryption.keySHA256 else {
                    throw ServiceError(
                        409, .blobUsesCustomerSpecifiedEncryption,
                        "The given customer specified encryption does not match the encryption used to encrypt the blocks.")
                }
                guard used.scope == conditions.encryption.scope else {
                    throw ServiceError(
                        400, .invalidHeaderValue,
                        "The value for one of the HTTP headers is not in the correct format: x-ms-encryption-scope is not the scope the blocks were staged with."
                    )
                }
            }
            var committed: [ExactString: (String, Int, Int)] = [:]
            var committedKey = BlobEncryption()
            if let existing = try Self.blob(container, name, db) {
                guard existing.type == .block else { throw Self.invalidBlobType }
                committedKey = BlobEncryption(keySHA256: existing.keySHA256, scope: conditions.encryption.scope)
                var offset = 0
                for block in existing.blocks {
                    committed[ExactString(block.id)] = (existing.data, offset, block.size)
                    offset += block.size
                }
            }
            var pieces: [(id: String, offset: Int, length: Int)] = []
            var blocks: [CommittedBlock] = []
            for (source, id) in list {
                let found: (String, Int, Int)?
                let fromStaged = source != .committed && uncommitted[ExactString(id)] != nil
                switch source {
                case .committed: found = committed[ExactString(id)]
                case .uncommitted: found = uncommitted[ExactString(id)].map { ($0.0, 0, $0.1) }
                case .latest: found = uncommitted[ExactString(id)].map { ($0.0, 0, $0.1) } ?? committed[ExactString(id)]
                }
                guard let found else { throw ServiceError(400, .invalidBlockList, "The specified block list is invalid.") }
                try checkKey(fromStaged ? (keys[ExactString(id)] ?? BlobEncryption()) : committedKey)
                pieces.append((found.0, found.1, found.2))
                blocks.append(CommittedBlock(id: id, size: found.2))
            }
            return (pieces, blocks)
        }
        // The blob's size is bounded before a byte is written: a short list naming one large
        // block many times would otherwise write its size times over.
        let size = blocks.reduce(0) { $0 + $1.size }
        guard size <= maxSize else { throw tooLarge(size) }
        // Pinned while composed: a commit of the same blob meanwhile may free the staged
        // blocks, whose deletion then waits for this one.
        let ids = Set(pieces.map(\.id))
        pins.pin(ids)
        let dataID: String
        do {
            dataID = try await bytes.composeFairly(pieces)
        } catch {
            await deleteBytes(pins.unpin(ids))
            throw error
        }
        await deleteBytes(pins.unpin(ids))
        return try await commitBlob(
            container: container, name: name, dataID: dataID, size: blocks.reduce(0) { $0 + $1.size },
            blocks: blocks, properties: properties, metadata: metadata, conditions: conditions, tier: tier, tags: tags)
    }

    /// The committed blocks of a blob and the uncommitted ones staged for it.
    func blockList(container: String, name: String) async throws -> (BlobRecord?, [CommittedBlock]) {
        try await read { db in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            let staged = try Row.fetchAll(
                db, sql: "SELECT blockID, size FROM blocks WHERE container = ? AND blob = ? ORDER BY blockID",
                arguments: [container, name]
            ).map { CommittedBlock(id: $0["blockID"], size: $0["size"]) }
            return (try Self.blob(container, name, db), staged)
        }
    }

    /// What Delete Blob does with a blob's snapshots (`x-ms-delete-snapshots`).
    enum SnapshotDeletion: Sendable { case none, include, only }

    /// Delete Blob. A blob with snapshots is deleted only with them (`include`), else 409
    /// SnapshotsPresent; `only` deletes the snapshots and keeps the blob.
    func deleteBlob(container: String, name: String, conditions: WriteConditions, snapshots: SnapshotDeletion = .none) async throws {
        let now = clock.now()
        var allowed = conditions
        allowed.mayWriteIncrementalCopy = true  // an incremental copy's destination may be deleted
        let conditions = allowed
        let freed = try await write { db -> [String] in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            guard let existing = try Self.blob(container, name, db) else { throw Self.blobNotFound }
            try conditions.check(existing: existing, db, now: now)
            let policy = try Self.deletePolicy(db)
            var ids = try Self.purgeExpired(container, name, now: now, db)
            // Its snapshots go with it (soft-deleted when the policy keeps deleted states).
            func deleteSnapshots() throws {
                if policy != nil {
                    try db.execute(
                        sql: "UPDATE snapshots SET deletedAt = ? WHERE container = ? AND name = ? AND kind = 'snapshot' AND deletedAt IS NULL",
                        arguments: [now.ticks, container, name])
                } else {
                    ids += try Self.removeSnapshots(container, name, db)
                }
            }
            switch snapshots {
            case .none:
                if try Self.hasSnapshots(container, name, db) {
                    throw ServiceError(409, .snapshotsPresent, "This operation is not permitted because the blob has snapshots.")
                }
            case .only:
                try deleteSnapshots()
                return ids
            case .include: try deleteSnapshots()
            }
            if self.versioning {
                try Self.retire(existing, as: .version, key: existing.versionId ?? existing.modified.iso8601, deletedAt: nil, db)
            } else if policy != nil {
                try Self.retire(existing, as: .base, key: "", deletedAt: now, db)
            } else {
                ids.append(existing.data)
            }
            ids += try Self.removeBytes(of: container, name, db)
            try db.execute(sql: "DELETE FROM blobs WHERE container = ? AND name = ?", arguments: [container, name])
            try BlobLease.delete(container, name, db)
            return ids.filter { !$0.isEmpty }
        }
        await deleteBytes(freed)
    }

    /// Replaces a blob's HTTP properties or metadata without touching its bytes.
    func updateBlob(
        container: String, name: String, properties: BlobHTTPProperties?, metadata: [(String, String)]?,
        conditions: WriteConditions
    ) async throws -> BlobRecord {
        let now = clock.now()
        return try await write { db in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            guard let existing = try Self.blob(container, name, db) else { throw Self.blobNotFound }
            try conditions.check(existing: existing, db, now: now)
            if existing.isArchived { throw Self.blobArchived }
            if let p = properties {
                try db.execute(
                    sql: """
                        UPDATE blobs SET contentType = ?, contentMD5 = ?, contentEncoding = ?, contentLanguage = ?,
                            contentDisposition = ?, cacheControl = ?, copy = NULL WHERE container = ? AND name = ?
                        """,
                    arguments: [
                        p.contentType, p.contentMD5, p.contentEncoding, p.contentLanguage, p.contentDisposition,
                        p.cacheControl, container, name,
                    ])
            }
            if let metadata {
                try db.execute(
                    sql: "UPDATE blobs SET metadata = ? WHERE container = ? AND name = ?",
                    arguments: [MetadataCoding.encode(metadata), container, name])
            }
            try db.execute(
                sql: "UPDATE blobs SET modified = ?, etag = ? WHERE container = ? AND name = ?",
                arguments: [now.ticks, ServerClock.etag(now), container, name])
            return try Self.blob(container, name, db)!
        }
    }

    /// Blobs in name order with `prefix`, from `marker` on, at most `limit`; the next marker when more follow.
    func listBlobs(container: String, prefix: String, marker: String, limit: Int) async throws -> ([BlobRecord], String?) {
        try await read { db in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM blobs WHERE container = ? AND name >= ? AND substr(name, 1, length(?)) = ? ORDER BY name LIMIT ?
                    """, arguments: [container, marker, prefix, prefix, limit + 1])
            let leases = try BlobLease.all(in: container, db)
            let records = rows.map { row in
                var record = BlobRecord(row: row)
                record.lease = leases[record.name]
                return record
            }
            return (Array(records.prefix(limit)), records.count > limit ? records[limit].name : nil)
        }
    }

    /// Blobs that have only uncommitted blocks (List Blobs `include=uncommittedblobs`), with
    /// `prefix`, in `from..<to` (`to` nil: to the end), as records of no bytes.
    func uncommittedBlobs(container: String, prefix: String, from: String, to: String?) async throws -> [BlobRecord] {
        try await read { db in
            let names = try String.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT blob FROM blocks WHERE container = ? AND blob >= ? AND substr(blob, 1, length(?)) = ?
                    AND NOT EXISTS (SELECT 1 FROM blobs WHERE blobs.container = blocks.container AND blobs.name = blocks.blob)
                    ORDER BY blob
                    """, arguments: [container, from, prefix, prefix])
            return names.filter { name in to.map { name < $0 } ?? true }.map { name in
                BlobRecord(
                    row: Row([
                        "container": container, "name": name, "data": "", "size": 0, "contentType": "application/octet-stream",
                        "created": 0, "modified": 0, "etag": "", "metadata": "[]", "blocks": "[]",
                    ]))
            }
        }
    }

    /// Opens a blob's bytes for reading; the blob row is re-read once if a concurrent
    /// overwrite freed the file first. Once open, the bytes stay readable whatever happens
    /// to the blob.
    func openBlob(_ record: BlobRecord) async throws -> (BlobRecord, any ByteReader) {
        var record = record
        // Appends replace a blob's object many times a second (each composes a new one and
        // frees the old): a read that lost the race reads the row again, a few times.
        var attempts = 0
        while true {
            attempts += 1
            do {
                return (record, try await open(record))
            } catch {
                // A snapshot never changes: failing to open it is no race to retry.
                if record.retired != nil || attempts >= 8 { throw error }
                let (_, again) = try await blob(record.container, record.name)
                guard let again else { throw Self.blobNotFound }
                record = again
            }
        }
    }

    /// A page blob's extents as they are now, with each byte object opened; the others' file.
    private func open(_ record: BlobRecord) async throws -> any ByteReader {
        let bytes = self.bytes
        guard record.type == .page else {
            let id = record.data
            guard FileByteStore.isComposed(id) else { return try await BlockingPool.run { try bytes.open(id) } }
            // A composed object's pieces are opened as the read reaches them: pinned first, so
            // a delete meanwhile waits; opening it checks it is still there (a commit that freed
            // it before the pin makes this fail, and openBlob reads the blob again).
            let pins = self.pins
            pins.pin([id])
            do {
                let reader = try await BlockingPool.run { try bytes.open(id) }
                return PinnedReader(base: reader, id: id, bytes: bytes, pins: pins)
            } catch {
                await deleteBytes(pins.unpin([id]))
                throw error
            }
        }
        let extents: [PageExtent]
        if let key = record.retiredKey {
            extents = try await read { db in try Self.snapshotPages(record.container, record.name, key, db).map(\.0) }
        } else {
            let (current, found) = try await read { db in
                (try Self.blob(record.container, record.name, db), try Self.pages(record.container, record.name, db))
            }
            guard let current, current.etag == record.etag else { throw ByteStoreError(description: "page blob changed while opening") }
            extents = found
        }
        // Pinned, then each checked to exist (one descriptor at a time): a Put Page that freed
        // one before the pin makes this fail, and openBlob reads the blob again.
        let written = extents.filter { !$0.isCleared }
        let ids = Set(written.map(\.data))
        let pins = self.pins
        pins.pin(ids)
        do {
            try await BlockingPool.run { for id in ids { try bytes.open(id).close() } }
        } catch {
            let free = pins.unpin(ids)
            await deleteBytes(free)
            throw error
        }
        return SparseReader(size: record.size, extents: written, bytes: bytes, pins: pins)
    }

    /// Deletes the uncommitted blocks and the pages of a blob, returning the byte objects they held.
    static func removeBytes(of container: String, _ name: String, _ db: Database) throws -> [String] {
        let ids = try String.fetchAll(
            db, sql: "SELECT data FROM blocks WHERE container = ? AND blob = ? UNION SELECT data FROM pages WHERE container = ? AND blob = ?",
            arguments: [container, name, container, name])
        try db.execute(sql: "DELETE FROM blocks WHERE container = ? AND blob = ?", arguments: [container, name])
        try db.execute(sql: "DELETE FROM pages WHERE container = ? AND blob = ?", arguments: [container, name])
        return ids.filter { !$0.isEmpty }
    }

    /// Removes byte files no row refers to any more, off the shared threads.
    func deleteBytes(_ ids: [String]) async {
        let ids = pins.deletable(ids)
        guard !ids.isEmpty else { return }
        let bytes = self.bytes
        _ = try? await BlockingPool.run { for id in ids { bytes.delete(id) } }
    }
}
