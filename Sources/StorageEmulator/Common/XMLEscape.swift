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
}
