import Foundation

/// Header fields: ordered, names compared case-insensitively.
public struct HeaderFields: Sendable, Equatable, Sequence {
    public private(set) var fields: [(name: String, value: String)] = []

    public init(_ fields: [(String, String)] = []) {
        for (n, v) in fields { self[n] = v }
    }

    public static func == (a: HeaderFields, b: HeaderFields) -> Bool {
        a.fields.count == b.fields.count && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// The value of a header; setting nil removes it.
    public subscript(name: String) -> String? {
        get { fields.first { Self.sameName($0.name, name) }?.value }
        set {
            // Removing only when there is something to remove: most sets add a new name.
            if fields.contains(where: { Self.sameName($0.name, name) }) { fields.removeAll { Self.sameName($0.name, name) } }
            if let newValue { fields.append((name, newValue)) }
        }
    }

    /// Adds a field, keeping any of the same name (a response may repeat one).
    mutating func append(_ name: String, _ value: String) { fields.append((name, value)) }

    /// `text` without the spaces and tabs around it (HTTP's optional white space), found by
    /// bytes: Foundation's `trimmingCharacters(in:)` bridged through NSString and was a
    /// quarter of decoding a batch response.
    public static func trimmed(_ text: Substring) -> String {
        let bytes = text.utf8
        let isBlank = { (b: UInt8) in b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }
        guard let start = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(Substring(bytes[start...last]))
    }

    /// Header names are ASCII tokens: compare them byte by byte, folding A–Z only
    /// (Foundation's locale-aware comparison was a hot spot under load).
    static func sameName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }  // O(1) for native strings: most names differ in length
        var x = a.utf8.makeIterator()
        var y = b.utf8.makeIterator()
        while true {
            switch (x.next(), y.next()) {
            case (nil, nil): return true
            case (let p?, let q?):
                if p != q && (p | 0x20) != (q | 0x20) { return false }
                if p != q && !((p | 0x20) >= 0x61 && (p | 0x20) <= 0x7A) { return false }
            default: return false
            }
        }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

/// An HTTP request as azseed sends it: the path exactly as it goes on the wire (already
/// percent-encoded) and the query as decoded pairs, so signing sees what the server sees.
public struct TransportRequest: Sendable {
    public var method: String
    /// `scheme://host[:port]`, no trailing slash.
    public var origin: String
    /// The percent-encoded path, starting with `/`.
    public var path: String
    /// Decoded query parameters in the order they are sent.
    public var query: [(name: String, value: String)]
    public var headers: HeaderFields
    public var body: Data

    public init(
        method: String, origin: String, path: String, query: [(String, String)] = [], headers: HeaderFields = HeaderFields(), body: Data = Data()
    ) {
        self.method = method
        self.origin = origin
        self.path = path
        self.query = query.map { (name: $0.0, value: $0.1) }
        self.headers = headers
        self.body = body
    }

    /// The query string as sent: names kept (`$filter`, `comp`), values percent-encoded.
    public var encodedQuery: String {
        query.map { "\(PercentEncoding.queryName($0.name))=\(PercentEncoding.component($0.value))" }.joined(separator: "&")
    }

    /// The full URL as sent.
    public var urlString: String {
        query.isEmpty ? origin + path : origin + path + "?" + encodedQuery
    }

    /// The URL without its query (no SAS signature can appear): what error messages show.
    public var displayURL: String { origin + path }
}

/// An HTTP response.
public struct TransportResponse: Sendable {
    public var status: Int
    public var headers: HeaderFields
    public var body: Data

    public init(status: Int, headers: HeaderFields = HeaderFields(), body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

extension TransportRequest {
    /// Splits a full URL into origin, raw path and decoded query, as the signer needs it.
    public init?(method: String, url: String, headers: HeaderFields = HeaderFields(), body: Data = Data()) {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let afterScheme = url[schemeEnd.upperBound...]
        let pathStart = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? afterScheme.endIndex
        let origin = String(url[..<pathStart])
        let rest = url[pathStart...]
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var path = parts.first.map(String.init) ?? ""
        if path.isEmpty { path = "/" }
        var query: [(String, String)] = []
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = PercentEncoding.decodeQueryComponent(kv[0]),
                    let value = PercentEncoding.decodeQueryComponent(kv.count > 1 ? kv[1] : "")
                else { return nil }
                query.append((name, value))
            }
        }
        self.init(method: method, origin: origin, path: path, query: query, headers: headers, body: body)
    }
}
