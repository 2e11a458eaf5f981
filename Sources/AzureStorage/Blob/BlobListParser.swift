import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Parses a List Blobs response (`EnumerationResults`).
final class BlobListParser: NSObject, XMLParserDelegate {
    private(set) var blobs: [BlobProperties] = []
    private(set) var nextMarker: String?
    private var path: [String] = []
    private var text = ""
    private var current: BlobProperties?

    static func parse(_ data: Data) throws -> (blobs: [BlobProperties], nextMarker: String?) {
        let delegate = BlobListParser()
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        guard parser.parse() else { throw BlobListError(reason: parser.parserError.map { "\($0)" } ?? "malformed XML") }
        return (delegate.blobs, delegate.nextMarker)
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:])
    {
        path.append(name)
        text = ""
        if name == "Blob" { current = BlobProperties(name: "", contentLength: 0) }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        defer {
            path.removeLast()
            text = ""
        }
        if name == "NextMarker", path.count == 2 {
            nextMarker = text.isEmpty ? nil : text
            return
        }
        guard current != nil else { return }
        let parent = path.count >= 2 ? path[path.count - 2] : ""
        switch (parent, name) {
        case ("Blob", "Name"): current!.name = text
        case ("Properties", "Content-Length"): current!.contentLength = Int(text) ?? 0
        case ("Properties", "Content-Type"): current!.contentType = text.isEmpty ? nil : text
        case ("Properties", "Content-MD5"): current!.contentMD5 = text.isEmpty ? nil : text
        case ("Properties", "Cache-Control"): current!.cacheControl = text.isEmpty ? nil : text
        case ("Properties", "Content-Encoding"): current!.contentEncoding = text.isEmpty ? nil : text
        case ("Properties", "Content-Language"): current!.contentLanguage = text.isEmpty ? nil : text
        case ("Properties", "Content-Disposition"): current!.contentDisposition = text.isEmpty ? nil : text
        case ("Properties", "AccessTier"): current!.accessTier = text.isEmpty ? nil : text
        case ("Properties", "LeaseState"): current!.leaseState = text.isEmpty ? nil : text
        case ("Properties", "Etag"): current!.etag = text
        case ("Properties", "Last-Modified"): current!.lastModified = text
        case ("Metadata", _): current!.metadata[name] = text
        case (_, "Blob"):
            blobs.append(current!)
            current = nil
        default: break
        }
    }
}

struct BlobListError: Error, CustomStringConvertible {
    var reason: String
    var description: String { "cannot read the blob listing: \(reason)" }
}
