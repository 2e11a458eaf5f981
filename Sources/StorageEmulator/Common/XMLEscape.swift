/// Escapes text for XML element content and attribute values.
enum XMLEscape {
    static func text(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

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
        var encoded = ""
        for byte in value.utf8 {
            let unreserved =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || [UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/")].contains(byte)
            encoded += unreserved ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
        }
        return "<Name Encoded=\"true\">\(encoded)</Name>"
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
