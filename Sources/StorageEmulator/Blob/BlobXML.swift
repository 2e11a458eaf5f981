import AzureStorage
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// XML pieces of Blob responses.
enum BlobXML {
    enum Item {
        case blob(BlobRecord)
        case prefix(String)
    }

    static func metadata(_ pairs: [(String, String)]) -> String {
        guard !pairs.isEmpty else { return "<Metadata />" }
        return "<Metadata>" + pairs.map { "<\($0.0)>\(XMLEscape.text($0.1))</\($0.0)>" }.joined() + "</Metadata>"
    }

    /// One `<Blob>` (fact sheet §7 listing shape; Etag unquoted, dates RFC 1123) or `<BlobPrefix>`.
    static func item(_ item: Item, includeMetadata: Bool) -> String {
        switch item {
        case .prefix(let name):
            return "<BlobPrefix>" + XMLEscape.element("Name", name) + "</BlobPrefix>"
        case .blob(let r):
            var xml = "<Blob>" + XMLEscape.element("Name", r.name) + "<Properties>"
            xml += XMLEscape.element("Creation-Time", ServerClock.httpDate(r.created))
            xml += XMLEscape.element("Last-Modified", ServerClock.httpDate(r.modified))
            xml += XMLEscape.element("Etag", r.etag.replacingOccurrences(of: "\"", with: ""))
            xml += XMLEscape.element("Content-Length", String(r.size))
            xml += XMLEscape.element("Content-Type", r.contentType)
            xml += XMLEscape.element("Content-Encoding", r.contentEncoding)
            xml += XMLEscape.element("Content-Language", r.contentLanguage)
            xml += XMLEscape.element("Content-CRC64", nil)
            xml += XMLEscape.element("Content-MD5", r.contentMD5)
            xml += XMLEscape.element("Cache-Control", r.cacheControl)
            xml += XMLEscape.element("Content-Disposition", r.contentDisposition)
            xml += "<BlobType>BlockBlob</BlobType><AccessTier>\(r.tier ?? "Hot")</AccessTier><AccessTierInferred>\(r.tier == nil)</AccessTierInferred>"
            xml += "<LeaseStatus>unlocked</LeaseStatus><LeaseState>available</LeaseState><ServerEncrypted>true</ServerEncrypted>"
            xml += "</Properties>"
            if includeMetadata { xml += metadata(r.metadata) }
            return xml + "</Blob>"
        }
    }
}

/// Reads a Put Block List body: `<BlockList>` of `<Latest>`, `<Committed>` and `<Uncommitted>` ids, in order.
final class BlockListParser: NSObject, XMLParserDelegate {
    private var entries: [(EmulatorStore.BlockSource, String)] = []
    private var text = ""
    private var depth = 0
    private var sawRoot = false
    private var invalid = false

    static func parse(_ data: Data) -> [(EmulatorStore.BlockSource, String)]? {
        let delegate = BlockListParser()
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        guard parser.parse(), delegate.sawRoot, !delegate.invalid else { return nil }
        return delegate.entries
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        depth += 1
        if depth == 1 { sawRoot = name == "BlockList"; if !sawRoot { invalid = true } }
        text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if depth == 2 {
            let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
            switch name {
            case "Latest": entries.append((.latest, id))
            case "Committed": entries.append((.committed, id))
            case "Uncommitted": entries.append((.uncommitted, id))
            default: invalid = true
            }
        }
        depth -= 1
    }
}
