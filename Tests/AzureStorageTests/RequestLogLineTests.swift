import Testing

@testable import AzureStorage
@testable import StorageProtocol

/// `--verbose`'s line for each shape of attempt. A reviewer saw "no answer no answer within 2 s":
/// with no status, the transport's reason stands where the status would.
@Suite struct RequestLogLineTests {
    static func record(status: Int?, code: String?) -> RequestRecord {
        RequestRecord(
            operation: "Get Blob", method: "GET", url: "http://127.0.0.1:1/a/c/b", status: status, errorCode: code, bytesSent: 0, bytesReceived: 0,
            seconds: 2.2, attempt: 1, retryReason: nil)
    }

    @Test func eachShapeReadsOnce() {
        #expect(RequestLog.text(Self.record(status: 201, code: nil)).hasPrefix("azseed: GET http://127.0.0.1:1/a/c/b 201 0 B sent"))
        #expect(
            RequestLog.text(Self.record(status: 404, code: "BlobNotFound")).hasPrefix("azseed: GET http://127.0.0.1:1/a/c/b 404 BlobNotFound 0 B"))
        let silent = RequestLog.text(Self.record(status: nil, code: "no answer within 2 s (the connection was accepted, then nothing came)"))
        #expect(
            silent.hasPrefix("azseed: GET http://127.0.0.1:1/a/c/b no answer within 2 s (the connection") && !silent.contains("no answer no answer"))
        #expect(RequestLog.text(Self.record(status: nil, code: nil)).contains(" no answer 0 B sent"))
        // A far end's code cannot drive the terminal or end the line (an attacker's review).
        let hostile = RequestLog.text(Self.record(status: 500, code: "Code\u{1B}[31mRED\r\u{2028}x"))
        #expect(!hostile.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x0D || $0.value == 0x2028 } && hostile.contains("\\u001B[31mRED"))
    }
}
