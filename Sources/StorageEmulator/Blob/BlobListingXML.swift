import Foundation
import StorageProtocol

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
            return blob(
                BlobListingEntry(
                    r, includeMetadata: includeMetadata, includeTags: includeTags, includeCopy: includeCopy, tagCount: tagCount,
                    retentionDays: retentionDays, now: ServerClock.wallClock()))
        }
    }

    /// A `<Blob>` element.
    static func blob(_ entry: BlobListingEntry) -> String {
        func element(_ field: (String, BlobListingEntry.Value)) -> String {
            switch field.1 {
            case .text(let text): XMLEscape.element(field.0, text)
            case .integer(let n): "<\(field.0)>\(n)</\(field.0)>"
            case .flag(let b): "<\(field.0)>\(b)</\(field.0)>"
            case .time(let t): XMLEscape.element(field.0, ServerClock.httpDate(t))
            }
        }
        var xml = "<Blob>" + XMLEscape.name(entry.name) + entry.head.map(element).joined()
        xml += "<Properties>" + entry.properties.map(element).joined() + "</Properties>"
        if let pairs = entry.metadata { xml += metadata(pairs) }
        if let tags = entry.tags { xml += tags.xml }
        if entry.hasVersionsOnly { xml += "<HasVersionsOnly>true</HasVersionsOnly>" }
        return xml + "</Blob>"
    }
}
