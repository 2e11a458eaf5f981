import StorageProtocol

/// An entity as stored, with the server-owned Timestamp.
struct StoredEntity: Sendable {
    var entity: TableEntity
    var timestamp: EdmDateTime

    /// `W/"datetime'<url-encoded timestamp>'"` (docs/PROTOCOL.md §0, item 9).
    var etag: String { Self.etag(timestamp) }

    static func etag(_ timestamp: EdmDateTime) -> String {
        // Written in one buffer, `%3A` in place of each `:` (an ETag per entity of every
        // answer: three buffers and a copy each were a fortieth of the emulator's time).
        var out = etagHead
        out.reserveCapacity(etagHead.count + 32 + etagTail.count)
        timestamp.appendISO8601(to: &out, timeSeparator: encodedColon)
        out += etagTail
        return String(decoding: out, as: UTF8.self)
    }

    private static let etagHead = Array("W/\"datetime'".utf8)
    private static let etagTail = Array("'\"".utf8)
    private static let encodedColon = Array("%3A".utf8)
    /// The time in an ETag this store writes: `0` where a digit stands.
    private static let etagTime = Array("0000-00-00T00%3A00%3A00.0000000Z".utf8)

    /// The Timestamp `etag` names when it is exactly an ETag ``etag(_:)`` writes; nil for any
    /// other text (which then matches no entity). Only that exact shape,
    /// `YYYY-MM-DDThh%3Amm%3Ass.fffffffZ` with every field in range, is read: the ISO parser
    /// is lenient (zones, year 0000), and a time before year 1 it took from an attacker's
    /// `+01:00` once trapped when written back. Read in place: an ETag per entity of every
    /// conditional write, and copies and a parse and a format each were a thirtieth of the
    /// emulator's time in a migration.
    static func timestamp(ofETag etag: String) -> EdmDateTime? {
        var etag = etag
        return etag.withUTF8 { bytes -> EdmDateTime? in
            let start = etagHead.count
            guard bytes.count == start + etagTime.count + etagTail.count,
                bytes.prefix(start).elementsEqual(etagHead), bytes.suffix(etagTail.count).elementsEqual(etagTail)
            else { return nil }
            for (offset, expected) in etagTime.enumerated() {
                let byte = bytes[start + offset]
                if expected == UInt8(ascii: "0") ? !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) : byte != expected { return nil }
            }
            func number(_ offset: Int, _ width: Int) -> Int {
                var value = 0
                for i in 0..<width { value = value * 10 + Int(bytes[start + offset + i] - UInt8(ascii: "0")) }
                return value
            }
            let (year, month, day) = (number(0, 4), number(5, 2), number(8, 2))
            let (hour, minute, second) = (number(11, 2), number(16, 2), number(21, 2))
            guard year >= 1, (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month), hour < 24,
                minute < 60, second < 60
            else { return nil }
            return EdmDateTime(
                year: year, month: month, day: day, hour: hour, minute: minute, second: second, fraction: Int64(number(24, 7)))
        }
    }
}
