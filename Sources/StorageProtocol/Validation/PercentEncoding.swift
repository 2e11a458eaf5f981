/// Percent-encoding as Azure's URLs need it.
public enum PercentEncoding {
    /// Encodes a blob name for a URL path: everything but RFC 3986 unreserved characters
    /// and `/` becomes `%XX` (UTF-8, uppercase hex).
    public static func path(_ text: String) -> String { encode(text, keep: UInt8(ascii: "/")) }

    /// Decodes one query name or value as Azure does: `+` is a space (Go clients such as
    /// rclone write spaces that way), then `%XX` escapes; nil when an escape is malformed.
    /// Client and emulator both read queries through it, so the signature is computed over
    /// the same string on both sides.
    public static func decodeQueryComponent(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// Encodes a query parameter or key value: only unreserved characters stay.
    public static func component(_ text: String) -> String { encode(text, keep: nil) }

    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    private static func encode(_ text: String, keep: UInt8?) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        appendEncoded(text.utf8, keep: keep, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// ``component(_:)`` of one byte, appended to `out` (a batch writes a key per operation
    /// into its body, with no String between). Not generic: called per byte from another
    /// module, a generic version went through unspecialized code (a third more client time).
    public static func appendComponent(_ b: UInt8, to out: inout [UInt8]) {
        appendEncoded(b, keep: nil, to: &out)
    }

    private static func appendEncoded(_ text: String.UTF8View, keep: UInt8?, to out: inout [UInt8]) {
        for b in text { appendEncoded(b, keep: keep, to: &out) }
    }

    private static func appendEncoded(_ b: UInt8, keep: UInt8?, to out: inout [UInt8]) {
        let unreserved =
            (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || (b >= 48 && b <= 57)
            || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "~")
        if unreserved || b == keep {
            out.append(b)
        } else {
            out.append(UInt8(ascii: "%"))
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 0xF)])
        }
    }
}

extension PercentEncoding {
    /// Encodes a query parameter name, keeping the `$` of OData options (`$filter`).
    public static func queryName(_ name: String) -> String {
        name.hasPrefix("$") ? "$" + component(String(name.dropFirst())) : component(name)
    }
}
