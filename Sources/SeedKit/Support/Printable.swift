/// Text from outside (a dataset's name, a key) made safe to print on one terminal line.
public enum Printable {
    /// `text` with control characters (C0, DEL, C1), line and paragraph separators and the
    /// BOM written as `\u{…}`: it can neither end the line nor drive the terminal.
    public static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029 || v == 0xFEFF {
                out += "\\u{" + String(v, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
