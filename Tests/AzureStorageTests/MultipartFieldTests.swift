import Foundation
import PropertyBased
import StorageProtocol
import Testing

/// A batch answer's successes are read for their status and ETag alone
/// (``MultipartBytes/httpHead(in:)``, ``MultipartBytes/field(_:in:)``): what they find must be
/// what reading every header (``MultipartBytes/httpMessage(in:)``) finds.
@Suite struct MultipartFieldTests {
    static let lines = [
        "ETag: W/\"a\"", "etag:b", " ETag :  c ", "ETAG:\td\t", "E-Tag: no", "ETagX: no", "Content-ID: 1", "no colon here", "",
        ":empty name", "ETag:", "Cache-Control: no-cache",
    ]

    @Test func aFieldIsWhatTheWholeHeaderReadingFinds() async {
        let line = Gen.element(of: Self.lines).map { $0 ?? "" }
        await propertyCheck(input: line.array(of: 0...8), Gen.bool) { lines, crlf in
            let end = crlf ? "\r\n" : "\n"
            let text = "Content-Type: application/http\(end)\(end)HTTP/1.1 204 No Content\(end)" + lines.map { $0 + end }.joined() + end
            // The multipart reader works on LF-only bytes (CRLF is removed first).
            let part = MultipartBytes.withoutCarriageReturns(Data(text.utf8))[...]
            let whole = MultipartBytes.httpMessage(in: part)
            let head = MultipartBytes.httpHead(in: part)
            #expect(head.startLine == whole.startLine)
            #expect(head.payload == whole.payload)
            #expect(MultipartBytes.field("ETag", in: head.headers) == whole.headers["ETag"], "\(lines)")
        }
    }

    @Test func onlyTheFirstHundredLinesAreRead() {
        let block = Array((Array(repeating: "X: y\n", count: 100) + ["ETag: late\n"]).joined().utf8)[...]
        #expect(MultipartBytes.field("ETag", in: block) == nil)
        #expect(MultipartBytes.field("X", in: block) == "y")
    }
}
