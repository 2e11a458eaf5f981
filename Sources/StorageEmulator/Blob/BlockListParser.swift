import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Reads a Put Block List body: `<BlockList>` of `<Latest>`, `<Committed>` and `<Uncommitted>` ids, in order.
final class BlockListParser: NSObject, XMLParserDelegate {
    private var entries: [(EmulatorStore.BlockSource, String)] = []
    private var text = ""
    private var depth = 0
    private var sawRoot = false
    private var invalid = false

    static func parse(_ data: Data) -> [(EmulatorStore.BlockSource, String)]? {
        let delegate = BlockListParser()
        guard let parser = XMLBody.parser(data) else { return nil }
        parser.delegate = delegate
        guard parser.parse(), delegate.sawRoot, !delegate.invalid else { return nil }
        return delegate.entries
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:])
    {
        depth += 1
        if depth == 1 {
            sawRoot = name == "BlockList"
            if !sawRoot { invalid = true }
        }
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
