import Foundation
import PropertyBased
import StorageProtocol
import Testing

@testable import StorageEmulator

/// Entity paths are read as bytes (``TableResource/parse(_:account:)``): what a client
/// percent-encodes comes back byte for byte, and a malformed path is refused as before.
@Suite struct TableResourceTests {
    /// How a client writes a key into a path: quotes doubled, then percent-encoded the way
    /// the SDKs do it (everything but unreserved characters), or left as is.
    static func encoded(_ text: String, percent: Bool) -> String {
        // Doubled byte by byte: `'` followed by a combining mark is one Character, which a
        // Character-wise replace would leave single.
        let doubled = String(decoding: text.utf8.flatMap { $0 == UInt8(ascii: "'") ? [$0, $0] : [$0] }, as: UTF8.self)
        guard percent else { return doubled }
        return doubled.utf8.map { byte -> String in
            let unreserved = (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || "-._~".utf8.contains(byte)
            return unreserved ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
        }.joined()
    }

    static let pieces = ["", "a", "'", "''", ",", "(", ")", "%", "%41", "RowKey='", "é", "😀", "e\u{301}", "'\u{301}", " ", "/", "~", "PartitionKey"]

    @Test func keysComeBackByteForByte() async {
        let piece = Gen.element(of: Self.pieces).map { $0 ?? "" }
        await propertyCheck(input: piece.array(of: 0...6), piece.array(of: 0...6), Gen.bool) { pkPieces, rkPieces, percent in
            let pk = pkPieces.joined()
            let rk = rkPieces.joined()
            let path = "/devstoreaccount1/events(PartitionKey='\(Self.encoded(pk, percent: percent))',RowKey='\(Self.encoded(rk, percent: percent))')"
            // Unencoded, a `%` would be read as an escape: such keys are sent encoded.
            if !percent && (pk.contains("%") || rk.contains("%")) { return }
            guard case .entity(let table, let parsedPK, let parsedRK)? = try? TableResource.parse(path, account: "devstoreaccount1") else {
                Issue.record("\(path) did not parse")
                return
            }
            #expect(table == "events")
            #expect(Array(parsedPK.utf8) == Array(pk.utf8), "\(path)")
            #expect(Array(parsedRK.utf8) == Array(rk.utf8), "\(path)")
        }
    }

    @Test func pathsParseAsBefore() throws {
        func parse(_ path: String) throws -> TableResource { try TableResource.parse(path, account: "acct") }
        #expect(try parse("/acct/$batch") == .batch)
        #expect(try parse("/acct/Tables") == .tables)
        #expect(try parse("/acct/Tables()") == .tables)
        #expect(try parse("/acct/Tables('a''b')") == .table("a'b"))
        #expect(try parse("/acct/Tables(%27t%27)") == .table("t"))
        #expect(try parse("/acct/t") == .entities("t"))
        #expect(try parse("/acct/t()") == .entities("t"))
        #expect(try parse("/acct/t/Tables") == .nested("t", rest: "Tables"))
        #expect(try parse("/acct/t(PartitionKey='p',RowKey='r')") == .entity("t", partitionKey: "p", rowKey: "r"))
        #expect(try parse("/acct/t(PartitionKey=%27p%2C%27%27%27,RowKey=%27%F0%9F%98%80%27)") == .entity("t", partitionKey: "p,'", rowKey: "😀"))
        for bad in [
            "/other/t", "/acct/", "/acct/(PartitionKey='p',RowKey='r')", "/acct/t(", "/acct/t(PartitionKey='p')",
            "/acct/t(PartitionKey='p',RowKey='r'",
            "/acct/t(PartitionKey='p',RowKey='r')x", "/acct/t(PartitionKey='p',RowKey='r',)", "/acct/Tables(t)", "/acct/Tables(')", "/acct/t%ZZ",
            "/acct/t%4", "/acct/t%FF", "/acct//x",
            // A quote followed by a combining mark still closes the key (bytes, not Characters):
            // what follows is then not `,RowKey='`.
            "/acct/t(PartitionKey='p'\u{301},RowKey='r')",
        ] {
            #expect(throws: ServiceError.self, "\(bad)") { try parse(bad) }
        }
    }

    @Test func etagsReadBackOnlyWhenExactlyWritten() {
        for ticks: Int64 in [0, 1, 639_000_000_000_000_001, 3_155_378_975_999_999_999] {
            let stamp = EdmDateTime(ticks: ticks)
            let etag = StoredEntity.etag(stamp)
            #expect(StoredEntity.timestamp(ofETag: etag)?.ticks == ticks, "\(etag)")
            // Another spelling of the same time names no entity: ETags are compared as text.
            #expect(StoredEntity.timestamp(ofETag: etag.replacingOccurrences(of: "%3A", with: ":")) == nil)
            #expect(StoredEntity.timestamp(ofETag: etag.replacingOccurrences(of: "Z'", with: "+00:00'")) == nil)
        }
        // From an attacker's review: a zone that moves year 0000 before year 1 parsed, then
        // trapped when written back — one request took the emulator down.
        for hostile in [
            "W/\"datetime'0000-01-01T00%3A00+0100'\"", "W/\"datetime'0000-01-01T00%3A00%3A00.0000000+00%3A01'\"",
            "W/\"datetime'0001-01-01T00%3A00%3A00.0000000-00%3A01'\"", "W/\"datetime'9999-12-31T23%3A59%3A59.9999999-01%3A00'\"",
        ] {
            #expect(StoredEntity.timestamp(ofETag: hostile) == nil, "\(hostile)")
        }
        // Times out of range are written, never trapped on.
        var out: [UInt8] = []
        EdmDateTime(ticks: -600_000_000).appendISO8601(to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "0000-12-31T23:59:00.0000000Z")
        out = []
        EdmDateTime(ticks: -400 * 864_000_000_000).appendISO8601(to: &out)
        #expect(String(decoding: out, as: UTF8.self).hasPrefix("-0001-"))
        out = []
        EdmDateTime(ticks: Int64.max).appendISO8601(to: &out)
        #expect(String(decoding: out, as: UTF8.self).hasPrefix("29228-"))
        for junk in ["*", "", "W/\"datetime''\"", "W/\"datetime'2026-01-01'\"", "\"x\""] {
            #expect(StoredEntity.timestamp(ofETag: junk) == nil, "\(junk)")
        }
    }

    /// How an ETag was read before it was read in place: the time decoded, checked against
    /// the shape, parsed, and written back to compare.
    static func referenceTimestamp(ofETag etag: String) -> EdmDateTime? {
        let head = "W/\"datetime'"
        guard etag.utf8.count > head.utf8.count + 2, etag.utf8.starts(with: head.utf8), etag.utf8.suffix(2).elementsEqual("'\"".utf8) else {
            return nil
        }
        let time = String(decoding: etag.utf8.dropFirst(head.utf8.count).dropLast(2), as: UTF8.self).replacingOccurrences(of: "%3A", with: ":")
        let shape = Array("0000-00-00T00:00:00.0000000Z".utf8)
        guard time.utf8.count == shape.count,
            zip(time.utf8, shape).allSatisfy({ $1 == UInt8(ascii: "0") ? (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) : $0 == $1 }),
            let stamp = EdmDateTime(iso8601: time), stamp.ticks >= 0, StoredEntity.etag(stamp).utf8.elementsEqual(etag.utf8)
        else { return nil }
        return stamp
    }

    /// Any time Azure holds is read back from its ETag; an ETag with any byte changed is read
    /// exactly as the reference reads it (a time in range, or nothing).
    @Test func etagsAreReadInPlaceAsTheyWereReadBefore() async {
        let bytes = Array("0123456789%3A:-+TZz .'\"W/".utf8)
        await propertyCheck(
            input: Gen.int(in: 0...Int(EdmDateTime.endOfRange.ticks - 1)), Gen.int(in: 0...45).array(of: 0...3),
            Gen.int(in: 0...(bytes.count - 1)).array(of: 3)
        ) { ticks, positions, replacements in
            let stamp = EdmDateTime(ticks: Int64(ticks))
            let etag = StoredEntity.etag(stamp)
            #expect(StoredEntity.timestamp(ofETag: etag) == stamp)
            var changed = Array(etag.utf8)
            for (position, replacement) in zip(positions, replacements) { changed[position] = bytes[replacement] }
            let text = String(decoding: changed, as: UTF8.self)
            #expect(StoredEntity.timestamp(ofETag: text) == Self.referenceTimestamp(ofETag: text), "\(text)")
        }
        for month in 1...12 {
            for day in [28, 29, 30, 31, 32] {
                let text = "W/\"datetime'2024-\(month < 10 ? "0" : "")\(month)-\(day)T23%3A59%3A59.9999999Z'\""
                #expect(StoredEntity.timestamp(ofETag: text) == Self.referenceTimestamp(ofETag: text), "\(text)")
            }
        }
    }
}
