/// Text for XML and HTML element content and attribute values: the five characters markup
/// gives meaning to, escaped (`&apos;` for `'`, which HTML5 reads too).
public enum MarkupEscape {
    public static func text(_ s: String) -> String {
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
}
