import Crypto
import Foundation

/// Shared Key and Shared Key Lite signatures for Blob and Table requests (docs/PROTOCOL.md §2–3).
///
/// Pure: it reads the request (including its `x-ms-date`) and returns strings, so the
/// client and the emulator share one implementation and tests compare exact strings.
public struct SharedKeySigner: Sendable {
    public let account: String
    let key: AccountKey

    public init(account: String, key: AccountKey) {
        self.account = account
        self.key = key
    }

    /// Blob service string-to-sign (versions 2009-09-19 and later).
    ///
    /// `ordinalHeaders` sorts the `x-ms-*` headers byte-wise instead of in the service's
    /// collation: some clients do, and a server accepts either.
    public static func blobStringToSign(_ request: TransportRequest, account: String, ordinalHeaders: Bool = false) -> String {
        var s = request.method + "\n"
        let length = request.headers["Content-Length"]
        for name in ["Content-Encoding", "Content-Language"] { s += (request.headers[name] ?? "") + "\n" }
        s += (length == "0" ? "" : length ?? "") + "\n"
        for name in ["Content-MD5", "Content-Type", "Date", "If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range"] {
            s += (request.headers[name] ?? "") + "\n"
        }
        s += canonicalizedHeaders(request.headers, ordinal: ordinalHeaders)
        s += "/" + account + request.path
        var grouped: [String: [String]] = [:]
        for (name, value) in request.query { grouped[name.lowercased(), default: []].append(value) }
        for name in grouped.keys.sorted() {
            s += "\n" + name + ":" + grouped[name]!.sorted().joined(separator: ",")
        }
        return s
    }

    /// Every `x-ms-*` header, lower-cased, in the service's collation, `name:value\n` each.
    static func canonicalizedHeaders(_ headers: HeaderFields, ordinal: Bool = false) -> String {
        let xms = headers.fields.filter { $0.name.lowercased().hasPrefix("x-ms-") }
            .map { (name: $0.name.lowercased(), value: String($0.value.drop { $0 == " " || $0 == "\t" })) }
        let sorted =
            ordinal
            ? xms.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            : xms.sorted { HeaderCollation.precedes($0.name, $1.name) }
        return sorted.map { "\($0.name):\($0.value)\n" }.joined()
    }

    /// Blob service Shared Key Lite string-to-sign: verb, Content-MD5, Content-Type, date,
    /// canonicalized headers, resource (`?comp=` only when present).
    public static func blobLiteStringToSign(_ request: TransportRequest, account: String) -> String {
        request.method + "\n" + (request.headers["Content-MD5"] ?? "") + "\n" + (request.headers["Content-Type"] ?? "") + "\n"
            + (request.headers["x-ms-date"] != nil ? "" : request.headers["Date"] ?? "") + "\n"
            + canonicalizedHeaders(request.headers) + tableResource(request, account: account)
    }

    /// Table service Shared Key string-to-sign: verb, Content-MD5, Content-Type, date,
    /// resource (`?comp=` only when present). No canonicalized headers.
    public static func tableStringToSign(_ request: TransportRequest, account: String) -> String {
        let date = request.headers["x-ms-date"] ?? request.headers["Date"] ?? ""
        return request.method + "\n" + (request.headers["Content-MD5"] ?? "") + "\n" + (request.headers["Content-Type"] ?? "") + "\n"
            + date + "\n" + tableResource(request, account: account)
    }

    /// Table service Shared Key Lite string-to-sign: date and resource.
    public static func tableLiteStringToSign(_ request: TransportRequest, account: String) -> String {
        (request.headers["x-ms-date"] ?? request.headers["Date"] ?? "") + "\n" + tableResource(request, account: account)
    }

    static func tableResource(_ request: TransportRequest, account: String) -> String {
        var resource = "/" + account + request.path
        if let comp = request.query.first(where: { $0.name == "comp" }) { resource += "?comp=" + comp.value }
        return resource
    }

    /// base64(HMAC-SHA256(key, UTF-8 string)).
    public func signature(_ stringToSign: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: SymmetricKey(data: key.bytes))
        return Data(mac).base64EncodedString()
    }

    /// The `Authorization` header value for a Blob request.
    public func blobAuthorization(_ request: TransportRequest) -> String {
        "SharedKey \(account):\(signature(Self.blobStringToSign(request, account: account)))"
    }

    /// The `Authorization` header value for a Table request (Shared Key, or Lite).
    public func tableAuthorization(_ request: TransportRequest, lite: Bool = false) -> String {
        lite
            ? "SharedKeyLite \(account):\(signature(Self.tableLiteStringToSign(request, account: account)))"
            : "SharedKey \(account):\(signature(Self.tableStringToSign(request, account: account)))"
    }

    /// RFC 1123 date in GMT, as `x-ms-date` carries it.
    public static func httpDate(_ date: Date) -> String {
        let t = EdmDateTime(unixSeconds: Int64(date.timeIntervalSince1970.rounded(.down)))
        let c = t.components
        let days = Int((t.unixSeconds >= 0 ? t.unixSeconds : t.unixSeconds - 86_399) / 86_400)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][c.month - 1]
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(weekday), \(two(c.day)) \(month) \(c.year) \(two(c.hour)):\(two(c.minute)):\(two(c.second)) GMT"
    }
}
