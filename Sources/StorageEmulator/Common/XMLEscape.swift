import Foundation
import StorageProtocol

/// Escapes text for XML element content and attribute values.
enum XMLEscape {
    static func text(_ s: String) -> String { MarkupEscape.text(s) }

    /// `<name>escaped</name>`, or `<name />` when empty.
    static func element(_ name: String, _ value: String?) -> String {
        guard let value, !value.isEmpty else { return "<\(name) />" }
        return "<\(name)>\(text(value))</\(name)>"
    }

    /// A blob name as List Blobs and Find Blobs by Tags write it: escaped, or — when it holds
    /// a character XML 1.0 cannot carry (U+FFFE, U+FFFF, most controls) — percent-encoded
    /// UTF-8 in `<Name Encoded="true">`, as Azure writes such names and the SDKs read them.
    static func name(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: { !isXMLCharacter($0) }) else { return element("Name", value) }
        return "<Name Encoded=\"true\">\(percentEncoded(value))</Name>"
    }

    /// An element echoing what a client sent (`Prefix`, `Marker`, `Delimiter`): escaped, or —
    /// holding a character XML cannot carry — percent-encoded with `Encoded="true"`, so no
    /// input makes the listing invalid XML.
    static func echo(_ name: String, _ value: String?) -> String {
        guard let value, value.unicodeScalars.contains(where: { !isXMLCharacter($0) }) else { return element(name, value) }
        return "<\(name) Encoded=\"true\">\(percentEncoded(value))</\(name)>"
    }

    /// ``echo(_:_:)`` of a parameter the request sent; nothing when it sent none. Azure leaves
    /// out `Prefix`, `Marker` and `MaxResults` a listing was not asked with, and clients read an
    /// empty one as a value (Rust's object_store fails on `<MaxResults />` as a number).
    static func echoIfSent(_ name: String, _ value: String?) -> String {
        guard let value else { return "" }
        return echo(name, value)
    }

    /// A listing's next marker: the next name as it is, or — when XML cannot carry it — an
    /// opaque `1!<base64url>` token (Azure's markers are opaque), which ``marker(_:)`` reads back.
    static func nextMarker(_ name: String?) -> String {
        element("NextMarker", markerToken(name))
    }

    /// The text of a next marker (``nextMarker(_:)``'s element's content; Arrow listings carry it too).
    static func markerToken(_ name: String?) -> String? {
        guard let name, name.unicodeScalars.contains(where: { !isXMLCharacter($0) }) else { return name }
        return "1!" + Data(name.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// The name a `marker` stands for: a token ``nextMarker(_:)`` made, decoded, else the text.
    static func marker(_ text: String) -> String {
        guard text.hasPrefix("1!"),
            let data = Data(base64Encoded: text.dropFirst(2).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")),
            let name = String(data: data, encoding: .utf8), name.unicodeScalars.contains(where: { !isXMLCharacter($0) })
        else { return text }
        return name
    }

    static func percentEncoded(_ value: String) -> String {
        var encoded = ""
        for byte in value.utf8 {
            let unreserved =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || [UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/")].contains(byte)
            encoded += unreserved ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
        }
        return encoded
    }

    /// XML 1.0's Char production.
    static func isXMLCharacter(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
