import Foundation

/// Removes what may be a secret from text that is about to be shown: a URL's query string
/// (a SAS: `?sv=…&sig=…`) and its user-info (`https://name:key@host`), wherever a URL sits in
/// the text, and the values of `AccountKey=`, `SharedAccessSignature=` and `sig=` (a connection
/// string echoed whole, say by the argument parser). Every message azseed prints goes through
/// it, so bad input is named without its credential.
public enum SecretRedaction {
    /// The text with each URL's user-info replaced by `<redacted>@` and its query string by
    /// `?<redacted>`. A URL starts at `scheme://` and ends at a blank, a quote or `;`. Text
    /// with no `://` comes back unchanged; a query-like tail on text that is no URL
    /// (`host?sig=…`) is cut as well when it holds `sig=`.
    public static func redact(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        func isEnd(_ c: Unicode.Scalar) -> Bool { c == " " || c == "'" || c == "\"" || c == ";" || c == "\n" || c == "\t" }
        while i < scalars.count {
            // Is a URL starting here? Find "://" preceded by letters.
            if scalars[i] == ":", i + 2 < scalars.count, scalars[i + 1] == "/", scalars[i + 2] == "/" {
                out.append(contentsOf: "://".unicodeScalars)
                i += 3
                var end = i
                while end < scalars.count, !isEnd(scalars[end]) { end += 1 }
                let url = scalars[i..<end]
                // User-info may hold a key with '/' in it (malformed, but pasted all the same):
                // anything before the last '@' ahead of the query counts as user-info.
                let queryStart = url.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? url.endIndex
                var start = url.startIndex
                if let at = url[..<queryStart].lastIndex(of: "@") {
                    out.append(contentsOf: "<redacted>@".unicodeScalars)
                    start = at + 1
                }
                if let question = url[start...].firstIndex(of: "?") {
                    out.append(contentsOf: url[start..<question])
                    out.append(contentsOf: "?<redacted>".unicodeScalars)
                } else {
                    out.append(contentsOf: url[start...])
                }
                i = end
                continue
            }
            out.append(scalars[i])
            i += 1
        }
        var result = String(out)
        for name in ["accountkey=", "sharedaccesssignature=", "sig=", "client_secret=", "client_assertion="] {
            result = redactValues(of: name, in: result)
        }
        return redactTokens(in: result)
    }

    /// JSON Web Tokens (bearer tokens, client assertions): `eyJ…` followed by two more
    /// dot-separated base64url parts become `<redacted token>`.
    private static func redactTokens(in text: String) -> String {
        guard text.contains("eyJ") else { return text }
        let bytes = Array(text.utf8)
        func isPart(_ b: UInt8) -> Bool {
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")
        }
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if i + 3 <= bytes.count, bytes[i] == UInt8(ascii: "e"), bytes[i + 1] == UInt8(ascii: "y"), bytes[i + 2] == UInt8(ascii: "J"),
                i == 0 || !isPart(bytes[i - 1])
            {
                var j = i
                var dots = 0
                while j < bytes.count, isPart(bytes[j]) || (bytes[j] == UInt8(ascii: ".") && dots < 2) {
                    if bytes[j] == UInt8(ascii: ".") { dots += 1 }
                    j += 1
                }
                if dots == 2, j - i >= 20 {
                    out += Array("<redacted token>".utf8)
                    i = j
                    continue
                }
            }
            out.append(bytes[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `name=value` (name matched without regard to case) becomes `name=<redacted>`; the value
    /// ends at a blank, a quote, `;` or `&`.
    private static func redactValues(of name: String, in text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let found = rest.range(of: name, options: .caseInsensitive) {
            result += rest[..<found.upperBound] + "<redacted>"
            rest = rest[found.upperBound...]
            rest = rest.drop { !($0 == " " || $0 == "'" || $0 == "\"" || $0 == ";" || $0 == "&" || $0 == "\n") }
        }
        return result + rest
    }
}
