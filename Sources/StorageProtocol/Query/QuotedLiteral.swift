/// OData's quoted literals, as in `$filter` strings and the keys of an entity URL:
/// `'…'` with a quote inside doubled (`''`).
public enum QuotedLiteral {
    /// Reads bytes from just past the opening quote to just past the closing one (before
    /// `end`); nil when it never closes. Quotes are found byte by byte, as Azure reads them: a
    /// quote followed by a combining mark still closes the text.
    public static func read(_ bytes: [UInt8], at i: inout Int, end: Int) -> String? {
        var out: [UInt8] = []
        while i < end {
            if bytes[i] == quote {
                if i + 1 < end, bytes[i + 1] == quote {
                    out.append(quote)
                    i += 2
                    continue
                }
                i += 1
                return String(decoding: out, as: UTF8.self)
            }
            out.append(bytes[i])
            i += 1
        }
        return nil
    }

    private static let quote = UInt8(ascii: "'")

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
