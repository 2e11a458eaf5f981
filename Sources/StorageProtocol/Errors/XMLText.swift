import Foundation

/// A tiny reader for the flat XML the Blob service returns (errors, block lists). Full
/// documents (listings) go through `BlobListParser`.
public enum XMLText {
    /// The text of the first `<name>…</name>` element, entities decoded.
    public static func element(_ name: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<\(name)>"), let close = xml.range(of: "</\(name)>", range: open.upperBound..<xml.endIndex) else {
            return nil
        }
        return unescape(String(xml[open.upperBound..<close.lowerBound]))
    }

    public static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
