/// Text from outside (a scanned value, a dataset's name) made safe for one line: inside a YAML
/// double-quoted scalar or comment, and on a terminal.
public enum Printable {
    /// `text` with `"` and `\` escaped, `\n`, `\r` and `\t` as such, and every other control
    /// character (C0, DEL, C1), line and paragraph separator, BOM, non-character and bidirectional
    /// control (U+061C, U+200E/F, U+202A–E, U+2066–9, which reorder what a reader sees) or
    /// invisible character (U+200B zero width space, U+2060–4 word joiner and invisible operators,
    /// which hide text or break a table's columns; the joiners U+200C/D that scripts and emoji
    /// need are kept) as
    /// `\uXXXX`: it can neither end the line (or the quoted scalar) nor drive the terminal. These are
    /// YAML's double-quoted escapes, so the text loads back byte for byte.
    /// With `quotes: false` (a terminal line rather than a quoted scalar) `"` and `\` stay as they are.
    public static func escaped(_ text: String, quotes: Bool = true) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22 where quotes: out += "\\\""
            case 0x5C where quotes: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x00..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF, 0x061C, 0x200B, 0x200E, 0x200F, 0x202A...0x202E, 0x2060...0x2064,
                0x2066...0x2069:
                out += "\\u" + String(format: "%04X", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
