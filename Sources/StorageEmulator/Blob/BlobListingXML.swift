import AzureStorage
import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The XML of blob listings and metadata in Blob responses.
enum BlobListingXML {
    enum Item {
        case blob(BlobRecord)
        case prefix(String)
    }

    static func metadata(_ pairs: [(String, String)]) -> String {
        guard !pairs.isEmpty else { return "<Metadata />" }
        return "<Metadata>" + pairs.map { "<\($0.0)>\(XMLEscape.text($0.1))</\($0.0)>" }.joined() + "</Metadata>"
    }

    /// One `<Blob>` (docs/PROTOCOL.md §7 listing shape; Etag unquoted, dates RFC 1123) or `<BlobPrefix>`.
    static func item(
        _ item: Item, includeMetadata: Bool, includeTags: Bool = false, includeCopy: Bool = false, tagCount: Bool = true,
        retentionDays: Int? = nil
    ) -> String {
        switch item {
        case .prefix(let name):
            return "<BlobPrefix>" + XMLEscape.name(name) + "</BlobPrefix>"
        case .blob(let r):
            var xml = "<Blob>" + XMLEscape.name(r.name)
            if r.deletedAt != nil { xml += "<Deleted>true</Deleted>" }
            if let snapshot = r.snapshot { xml += XMLEscape.element("Snapshot", snapshot) }
            if let versionId = r.versionId, r.snapshot == nil {
                xml += XMLEscape.element("VersionId", versionId)
                if r.retired == nil { xml += "<IsCurrentVersion>true</IsCurrentVersion>" }
            }
            xml += "<Properties>"
            xml += XMLEscape.element("Creation-Time", ServerClock.httpDate(r.created))
            xml += XMLEscape.element("Last-Modified", ServerClock.httpDate(r.modified))
            xml += XMLEscape.element("Etag", r.etag.replacingOccurrences(of: "\"", with: ""))
            xml += XMLEscape.element("Content-Length", String(r.size))
            xml += XMLEscape.element("Content-Type", r.properties.contentType)
            xml += XMLEscape.element("Content-Encoding", r.properties.contentEncoding)
            xml += XMLEscape.element("Content-Language", r.properties.contentLanguage)
            xml += XMLEscape.element("Content-CRC64", nil)
            xml += XMLEscape.element("Content-MD5", r.properties.contentMD5)
            xml += XMLEscape.element("Cache-Control", r.properties.cacheControl)
            xml += XMLEscape.element("Content-Disposition", r.properties.contentDisposition)
            xml += "<BlobType>\(r.type.rawValue)</BlobType>"
            switch r.type {
            case .block:
                xml += "<AccessTier>\(r.tier ?? "Hot")</AccessTier><AccessTierInferred>\(r.tier == nil)</AccessTierInferred>"
                if let smart = r.smartAccessTier { xml += XMLEscape.element("SmartAccessTier", smart) }
                if let status = r.archiveStatus { xml += XMLEscape.element("ArchiveStatus", status) }
                if let priority = r.rehydratePriority { xml += XMLEscape.element("RehydratePriority", priority) }
                if let changed = r.tierChanged { xml += XMLEscape.element("AccessTierChangeTime", ServerClock.httpDate(changed)) }
            case .page: xml += "<x-ms-blob-sequence-number>\(r.sequenceNumber)</x-ms-blob-sequence-number>"
            case .append: if r.sealed { xml += "<Sealed>true</Sealed>" }
            }
            let lease = Dictionary(BlobLease.headers(r.lease, at: ServerClock.wallClock()), uniquingKeysWith: { a, _ in a })
            xml += XMLEscape.element("LeaseStatus", lease["x-ms-lease-status"]) + XMLEscape.element("LeaseState", lease["x-ms-lease-state"])
            if let duration = lease["x-ms-lease-duration"] { xml += XMLEscape.element("LeaseDuration", duration) }
            xml += "<ServerEncrypted>true</ServerEncrypted>"
            if let key = r.keySHA256 { xml += XMLEscape.element("CustomerProvidedKeySha256", key) }
            if let scope = r.encryptionScope { xml += XMLEscape.element("EncryptionScope", scope) }
            if includeCopy, let copy = r.copy {
                xml +=
                    XMLEscape.element("CopyId", copy.id) + XMLEscape.element("CopyStatus", copy.status) + XMLEscape.element("CopySource", copy.source)
                xml += XMLEscape.element("CopyProgress", copy.status == "success" ? "\(copy.bytes)/\(copy.bytes)" : "0/\(copy.bytes)")
                if copy.status == "success" { xml += XMLEscape.element("CopyCompletionTime", ServerClock.httpDate(copy.completed)) }
            }
            if let copy = r.copy, copy.incremental {
                xml += "<IncrementalCopy>true</IncrementalCopy>"
                if let snapshot = copy.destinationSnapshot { xml += XMLEscape.element("CopyDestinationSnapshot", snapshot) }
            }
            if tagCount && !r.tags.pairs.isEmpty { xml += "<TagCount>\(r.tags.pairs.count)</TagCount>" }
            if let deletedAt = r.deletedAt {
                xml += XMLEscape.element("DeletedTime", ServerClock.httpDate(deletedAt))
                if let days = retentionDays {
                    let left = Double(days) - Double(ServerClock.wallClock().ticks - deletedAt.ticks) / 864_000_000_000
                    xml += "<RemainingRetentionDays>\(max(Int(left.rounded(.up)), 0))</RemainingRetentionDays>"
                }
            }
            xml += "</Properties>"
            if includeMetadata { xml += metadata(r.metadata) }
            if includeTags && !r.tags.pairs.isEmpty { xml += r.tags.xml }
            if r.hasVersionsOnly { xml += "<HasVersionsOnly>true</HasVersionsOnly>" }
            return xml + "</Blob>"
        }
    }
}
