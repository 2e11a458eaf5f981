/// Removes what may be a secret from text that is about to be shown: a URL's query string
/// (a SAS: `?sv=…&sig=…`) and its user-info (`https://name:key@host`), wherever a URL sits in
/// the text. Every message that echoes user input holding a URL goes through it, so a bad
/// endpoint is named without its credential.
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
                let authorityEnd = url.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? url.endIndex
                var start = url.startIndex
                if let at = url[..<authorityEnd].lastIndex(of: "@") {
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
        let result = String(out)
        // A SAS pasted without a URL in front of it.
        guard let sig = result.range(of: "sig=") else { return result }
        let tail = result[sig.upperBound...]
        let end = tail.firstIndex(where: { $0 == " " || $0 == "'" || $0 == "\"" || $0 == ";" || $0 == "&" }) ?? tail.endIndex
        return String(result[..<sig.upperBound]) + "<redacted>" + redact(String(tail[end...]))
    }
}
