import Foundation
import GRDB
import StorageProtocol

/// A committed block of a block blob: its id and length, in order.
struct CommittedBlock: Sendable, Equatable {
    var id: String
    var size: Int
}

/// A blob as stored: properties in SQLite, bytes in the byte store under `data`.
struct BlobRecord: Sendable {
    var container: String
    var name: String
    var data: String
    var size: Int
    var properties: BlobHTTPProperties
    var created: EdmDateTime
    var modified: EdmDateTime
    var etag: String
    var metadata: [(String, String)]
    var blocks: [CommittedBlock]
    /// Set when the blob is the destination of a Copy Blob.
    var copy: CopyInfo?
    /// The tier Set Blob Tier chose; nil means Hot, inferred.
    var tier: String?
    /// Its lease, when a listing read it (the `leases` table; not a column of `blobs`).
    var lease: BlobLease?
    var type: BlobType
    /// A page blob's sequence number (`x-ms-blob-sequence-number`).
    var sequenceNumber: Int64
    /// An append blob that takes no more blocks (Seal).
    var sealed: Bool
    /// How many blocks were appended to an append blob (`x-ms-blob-committed-block-count`).
    var appendCount: Int
    /// Where a pending rehydration of an archived blob goes (`Hot`, `Cool`, …), at what
    /// priority; nil when none is pending.
    var rehydrateTo: String?
    var rehydratePriority: String?
    /// When the tier last changed (`x-ms-access-tier-change-time`); nil if never set.
    var tierChanged: EdmDateTime?
    /// Its blob index tags.
    var tags: BlobTags
    /// The snapshot's time (`2026-11-26T09:30:00.1234567Z`) when this is a snapshot, not the blob.
    var snapshot: String?
    /// Its version id (a time, like a snapshot's) when it was written with versioning on.
    var versionId: String?
    /// What state of the blob this is when it is not the current blob (a row of `snapshots`).
    var retired: RetiredKind?
    /// When it was soft-deleted; nil when it is not.
    var deletedAt: EdmDateTime?
    /// A listing entry for a deleted blob that only has versions (`include=deletedwithversions`).
    var hasVersionsOnly = false
    /// The SHA-256 of the customer-provided key it was written with (``BlobEncryption``).
    var keySHA256: String?
    /// The encryption scope it was written with; nil: the account's key.
    var encryptionScope: String?

    /// The states of a blob other than the current one.
    enum RetiredKind: String, Sendable {
        case snapshot
        /// A previous version.
        case version
        /// The blob itself, soft-deleted.
        case base
    }

    /// Its key in the `snapshots` table when it is a retired state.
    var retiredKey: String? {
        switch retired {
        case .snapshot: snapshot
        case .version: versionId
        case .base: ""
        case nil: nil
        }
    }

    /// Whether this is the current version of a versioned blob (`x-ms-is-current-version`).
    var isCurrentVersion: Bool { retired == nil && versionId != nil }

    init(row: Row) {
        container = row["container"]
        name = row["name"]
        data = row["data"]
        size = row["size"]
        properties = BlobHTTPProperties(
            contentType: row["contentType"], contentMD5: row["contentMD5"], contentEncoding: row["contentEncoding"],
            contentLanguage: row["contentLanguage"], contentDisposition: row["contentDisposition"],
            cacheControl: row["cacheControl"])
        created = EdmDateTime(ticks: row["created"])
        modified = EdmDateTime(ticks: row["modified"])
        etag = row["etag"]
        metadata = MetadataCoding.decode(row["metadata"])
        blocks = MetadataCoding.decode(row["blocks"]).map { CommittedBlock(id: $0.0, size: Int($0.1) ?? 0) }
        copy = (row["copy"] as String?).flatMap(CopyInfo.init(encoded:))
        tier = row["tier"]
        type = BlobType(rawValue: row["type"] ?? "BlockBlob") ?? .block
        sequenceNumber = row["sequenceNumber"] ?? 0
        sealed = (row["sealed"] as Int?) == 1
        appendCount = row["appendCount"] ?? 0
        retired = row.hasColumn("kind") ? RetiredKind(rawValue: row["kind"]) : nil
        let key: String? = row.hasColumn("snapshot") ? row["snapshot"] : nil
        snapshot = retired == .snapshot ? key : nil
        versionId = retired == .version ? key : (row.hasColumn("versionId") ? row["versionId"] : nil)
        deletedAt = (row.hasColumn("deletedAt") ? row["deletedAt"] as Int64? : nil).map(EdmDateTime.init(ticks:))
        keySHA256 = row.hasColumn("keySHA256") ? row["keySHA256"] : nil
        encryptionScope = row.hasColumn("encryptionScope") ? row["encryptionScope"] : nil
        tags = BlobTags(encoded: row.hasColumn("tags") ? row["tags"] : "[]")
        rehydrateTo = row.hasColumn("rehydrateTo") ? row["rehydrateTo"] : nil
        rehydratePriority = row.hasColumn("rehydratePriority") ? row["rehydratePriority"] : nil
        tierChanged = (row.hasColumn("tierChanged") ? row["tierChanged"] as Int64? : nil).map(EdmDateTime.init(ticks:))
        // A rehydration is done once its time has come: the blob is read as it then is.
        if let to = rehydrateTo, let at = (row["rehydrateAt"] as Int64?), at <= ServerClock.wallClock().ticks {
            tier = to
            tierChanged = EdmDateTime(ticks: at)
            rehydrateTo = nil
            rehydratePriority = nil
        }
    }

    /// Whether the blob is in the Archive tier (rehydrating or not): its bytes cannot be read.
    var isArchived: Bool { tier == "Archive" }

    /// The online tier a blob in the Smart tier is in now (`x-ms-smart-access-tier`). Azure
    /// moves such a blob between Hot, Cool and Cold by how it is read; every tier serves the
    /// same bytes, and the emulator keeps a Smart blob in Hot (docs/PROTOCOL.md §7).
    var smartAccessTier: String? { tier == "Smart" ? "Hot" : nil }

    /// `x-ms-archive-status` while a rehydration is pending.
    var archiveStatus: String? { rehydrateTo.map { "rehydrate-pending-to-" + $0.lowercased() } }
}

/// The three kinds of blob, by their `x-ms-blob-type` names.
enum BlobType: String, Sendable {
    case block = "BlockBlob"
    case append = "AppendBlob"
    case page = "PageBlob"
}

/// What Get Blob Properties reports about the copy that made a blob (`x-ms-copy-*`). Copies
/// finish before their answer (`success`), except Incremental Copy Blob, which is `pending`
/// until its destination snapshot is made; an incremental copy's destination is marked so
/// (`x-ms-incremental-copy`) and names its last snapshot (`x-ms-copy-destination-snapshot`).
struct CopyInfo: Sendable, Equatable {
    var id: String
    var source: String
    var bytes: Int
    var completed: EdmDateTime
    var status = "success"
    var incremental = false
    var destinationSnapshot: String?

    init(id: String, source: String, bytes: Int, completed: EdmDateTime) {
        self.id = id
        self.source = source
        self.bytes = bytes
        self.completed = completed
    }

    init?(encoded: String) {
        let fields = Dictionary(MetadataCoding.decode(encoded), uniquingKeysWith: { $1 })
        guard let id = fields["id"], let source = fields["source"], let bytes = fields["bytes"].flatMap(Int.init),
            let ticks = fields["completed"].flatMap(Int64.init)
        else { return nil }
        self.init(id: id, source: source, bytes: bytes, completed: EdmDateTime(ticks: ticks))
        status = fields["status"] ?? "success"
        incremental = fields["incremental"] == "true"
        destinationSnapshot = fields["destinationSnapshot"]
    }

    var encoded: String {
        var fields = [("id", id), ("source", source), ("bytes", String(bytes)), ("completed", String(completed.ticks))]
        if status != "success" { fields.append(("status", status)) }
        if incremental { fields.append(("incremental", "true")) }
        if let destinationSnapshot { fields.append(("destinationSnapshot", destinationSnapshot)) }
        return MetadataCoding.encode(fields)
    }
}

struct BlobHTTPProperties: Sendable {
    var contentType: String
    var contentMD5: String?
    var contentEncoding: String?
    var contentLanguage: String?
    var contentDisposition: String?
    var cacheControl: String?
}
