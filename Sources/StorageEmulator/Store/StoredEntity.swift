import StorageProtocol

/// An entity as stored, with the server-owned Timestamp.
struct StoredEntity: Sendable {
    var entity: TableEntity
    var timestamp: EdmDateTime

    /// `W/"datetime'<url-encoded timestamp>'"` (docs/PROTOCOL.md §0, item 9).
    var etag: String { Self.etag(timestamp) }

    static func etag(_ timestamp: EdmDateTime) -> String {
        // Built byte by byte: Foundation's replacingOccurrences was a fifth of a query's time.
        var time: [UInt8] = []
        time.reserveCapacity(28)
        timestamp.appendISO8601(to: &time)
        var out = Array("W/\"datetime'".utf8)
        out.reserveCapacity(48)
        for byte in time {
            if byte == UInt8(ascii: ":") { out += [UInt8(ascii: "%"), UInt8(ascii: "3"), UInt8(ascii: "A")] } else { out.append(byte) }
        }
        out += [UInt8(ascii: "'"), UInt8(ascii: "\"")]
        return String(decoding: out, as: UTF8.self)
    }
}
