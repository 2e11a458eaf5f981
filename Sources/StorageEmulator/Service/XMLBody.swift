import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The one gate every XML body the emulator reads goes through (block lists, ACLs, service
/// properties): a document type declaration — and with it entity declarations, external
/// entities and billion-laughs expansions — is never read (Azure's bodies have none), and the
/// parser resolves no external entity. docs/SECURITY.md, "anonymous client" and "key holder".
enum XMLBody {
    /// A parser for `data`, or nil when the document declares a document type or entities.
    static func parser(_ data: Data) -> XMLParser? {
        guard !declaresDocumentType(data) else { return nil }
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        return parser
    }

    /// Whether `<!DOCTYPE` or `<!ENTITY` appears anywhere (any case): markup declarations are
    /// refused wherever they stand, comments and CDATA included, rather than parsed around.
    static func declaresDocumentType(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        let patterns = [Array("<!doctype".utf8), Array("<!entity".utf8)]
        guard bytes.count >= 8 else { return false }
        for i in 0..<bytes.count where bytes[i] == UInt8(ascii: "<") {
            for pattern in patterns where i + pattern.count <= bytes.count {
                var same = true
                for (j, p) in pattern.enumerated() where bytes[i + j] | 0x20 != p && bytes[i + j] != p {
                    same = false
                    break
                }
                if same { return true }
            }
        }
        return false
    }

    static let invalid = ServiceError(
        400, .invalidXmlDocument, "XML specified is not syntactically valid: a document type or entity declaration is not accepted.")
}
