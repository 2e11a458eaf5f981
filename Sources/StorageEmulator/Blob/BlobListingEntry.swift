import StorageProtocol

/// One blob of a listing as named, typed values — the elements of List Blobs' `<Blob>` in their
/// order. The XML answer and the Arrow answer are both written from it, so they say the same.
struct BlobListingEntry {
    enum Value {
        /// Text; nil or empty is an empty element (XML), null (Arrow).
        case text(String?)
        case integer(Int64)
        case flag(Bool)
        case time(EdmDateTime)
    }

    var name: String
    /// Before `<Properties>`: Deleted, Snapshot, VersionId, IsCurrentVersion.
    var head: [(String, Value)] = []
    var properties: [(String, Value)] = []
    /// The blob's metadata, when the listing includes it.
    var metadata: [(String, String)]?
    /// The blob's tags, when the listing includes them and it has any.
    var tags: BlobTags?
    var hasVersionsOnly = false

    /// What a listing says of `r`: `includeCopy` adds the copy properties, `tagCount` the tag
    /// count, `retentionDays` (soft delete's days) a deleted blob's remaining days.
    init(
        _ r: BlobRecord, includeMetadata: Bool, includeTags: Bool = false, includeCopy: Bool = false, tagCount: Bool = true,
        retentionDays: Int? = nil, now: EdmDateTime
    ) {
        name = r.name
        if r.deletedAt != nil { head.append(("Deleted", .flag(true))) }
        if let snapshot = r.snapshot { head.append(("Snapshot", .text(snapshot))) }
        if let versionId = r.versionId, r.snapshot == nil {
            head.append(("VersionId", .text(versionId)))
            if r.retired == nil { head.append(("IsCurrentVersion", .flag(true))) }
        }
        var p: [(String, Value)] = [
            ("Creation-Time", .time(r.created)), ("Last-Modified", .time(r.modified)),
            ("Etag", .text(r.etag.replacingOccurrences(of: "\"", with: ""))), ("Content-Length", .integer(Int64(r.size))),
            ("Content-Type", .text(r.properties.contentType)), ("Content-Encoding", .text(r.properties.contentEncoding)),
            ("Content-Language", .text(r.properties.contentLanguage)), ("Content-CRC64", .text(nil)),
            ("Content-MD5", .text(r.properties.contentMD5)), ("Cache-Control", .text(r.properties.cacheControl)),
            ("Content-Disposition", .text(r.properties.contentDisposition)), ("BlobType", .text(r.type.rawValue)),
        ]
        switch r.type {
        case .block:
            p += [("AccessTier", .text(r.tier ?? "Hot")), ("AccessTierInferred", .flag(r.tier == nil))]
            if let smart = r.smartAccessTier { p.append(("SmartAccessTier", .text(smart))) }
            if let status = r.archiveStatus { p.append(("ArchiveStatus", .text(status))) }
            if let priority = r.rehydratePriority { p.append(("RehydratePriority", .text(priority))) }
            if let changed = r.tierChanged { p.append(("AccessTierChangeTime", .time(changed))) }
        case .page: p.append(("x-ms-blob-sequence-number", .integer(r.sequenceNumber)))
        case .append: if r.sealed { p.append(("Sealed", .flag(true))) }
        }
        let lease = Dictionary(BlobLease.headers(r.lease, at: now), uniquingKeysWith: { a, _ in a })
        p += [("LeaseStatus", .text(lease["x-ms-lease-status"])), ("LeaseState", .text(lease["x-ms-lease-state"]))]
        if let duration = lease["x-ms-lease-duration"] { p.append(("LeaseDuration", .text(duration))) }
        p.append(("ServerEncrypted", .flag(true)))
        if let key = r.keySHA256 { p.append(("CustomerProvidedKeySha256", .text(key))) }
        if let scope = r.encryptionScope { p.append(("EncryptionScope", .text(scope))) }
        if includeCopy, let copy = r.copy {
            p += [("CopyId", .text(copy.id)), ("CopyStatus", .text(copy.status)), ("CopySource", .text(copy.source))]
            p.append(("CopyProgress", .text(copy.status == "success" ? "\(copy.bytes)/\(copy.bytes)" : "0/\(copy.bytes)")))
            if copy.status == "success" { p.append(("CopyCompletionTime", .time(copy.completed))) }
        }
        if let copy = r.copy, copy.incremental {
            p.append(("IncrementalCopy", .flag(true)))
            if let snapshot = copy.destinationSnapshot { p.append(("CopyDestinationSnapshot", .text(snapshot))) }
        }
        if tagCount && !r.tags.pairs.isEmpty { p.append(("TagCount", .integer(Int64(r.tags.pairs.count)))) }
        if let deletedAt = r.deletedAt {
            p.append(("DeletedTime", .time(deletedAt)))
            if let days = retentionDays {
                let left = Double(days) - Double(now.ticks - deletedAt.ticks) / 864_000_000_000
                p.append(("RemainingRetentionDays", .integer(Int64(max(Int(left.rounded(.up)), 0)))))
            }
        }
        properties = p
        if includeMetadata { metadata = r.metadata }
        if includeTags && !r.tags.pairs.isEmpty { tags = r.tags }
        hasVersionsOnly = r.hasVersionsOnly
    }
}
