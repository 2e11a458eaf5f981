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

    /// The Timestamp `etag` names when it is exactly an ETag ``etag(_:)`` writes; nil for any
    /// other text (which then matches no entity).
    static func timestamp(ofETag etag: String) -> EdmDateTime? {
        let bytes = Array(etag.utf8)
        let prefix = Array("W/\"datetime'".utf8)
        let suffix = Array("'\"".utf8)
        guard bytes.count > prefix.count + suffix.count, bytes.starts(with: prefix), bytes.suffix(suffix.count).elementsEqual(suffix) else {
            return nil
        }
        var time: [UInt8] = []
        time.reserveCapacity(28)
        var i = prefix.count
        let end = bytes.count - suffix.count
        while i < end {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < end, bytes[i + 1] == UInt8(ascii: "3"), bytes[i + 2] == UInt8(ascii: "A") {
                time.append(UInt8(ascii: ":"))
                i += 3
            } else {
                time.append(bytes[i])
                i += 1
            }
        }
        // Only the exact shape this store writes, `YYYY-MM-DDThh:mm:ss.fffffffZ`, before parsing:
        // the parser is lenient (zones, year 0000), and a time before year 1 it took from an
        // attacker's `+01:00` once trapped when written back.
        let shape = Array("0000-00-00T00:00:00.0000000Z".utf8)
        guard time.count == shape.count,
            zip(time, shape).allSatisfy({ byte, expected in
                expected == UInt8(ascii: "0") ? (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) : byte == expected
            }),
            let stamp = EdmDateTime(iso8601: String(decoding: time, as: UTF8.self)), stamp.ticks >= 0, Self.etag(stamp).isExactly(etag)
        else { return nil }
        return stamp
    }
}
