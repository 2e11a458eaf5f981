/// OData's quoted literals, as in `$filter` strings and the keys of an entity URL:
/// `'…'` with a quote inside doubled (`''`).
public enum QuotedLiteral {
    /// Reads from just past the opening quote to just past the closing one; nil when it never closes.
    public static func read(_ chars: [Character], at i: inout Int) -> String? {
        var out = ""
        while i < chars.count {
            if chars[i] == "'" {
                if i + 1 < chars.count, chars[i + 1] == "'" {
                    out.append("'")
                    i += 2
                    continue
                }
                i += 1
                return out
            }
            out.append(chars[i])
            i += 1
        }
        return nil
    }
}
