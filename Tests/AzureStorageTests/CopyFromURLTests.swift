import AzureStorage
import Foundation
import Testing

/// Server-side copies as the client sends them: the source condition on every request, and
/// which `CannotVerifyCopySource` answers are worth sending again.
@Suite struct CopyFromURLTests {
    let account = StorageAccount.development()
    static let source = "https://source.example/c/a.bin?sv=2023-11-03&sig=abc"

    static func cannotVerify(sourceStatus: Int?) -> TransportResponse {
        var headers = [("x-ms-error-code", "CannotVerifyCopySource")]
        if let sourceStatus { headers.append(("x-ms-copy-source-status-code", String(sourceStatus))) }
        return TransportResponse(status: sourceStatus ?? 500, headers: HeaderFields(headers))
    }

    @Test func aSourceThatWasBusyIsReadAgainAndOneThatCannotBeReachedIsNot() async throws {
        let sleeps = SleepRecorder()
        let busy = FakeTransport(responses: [Self.cannotVerify(sourceStatus: 503), TransportResponse(status: 201)])
        try await BlobClient(account: account, transport: busy, configuration: testConfiguration(sleeps))
            .putBlobFromURL(container: "photos", name: "a.bin", source: Self.source, options: BlobUploadOptions(contentType: "image/jpeg"), md5: nil)
        #expect(busy.requests.count == 2 && sleeps.recorded.count == 1)

        for status in [nil, 403, 404, 409] as [Int?] {
            let refused = FakeTransport(responses: [Self.cannotVerify(sourceStatus: status), TransportResponse(status: 201)])
            let error = await #expect(throws: AzureStorageError.self) {
                try await BlobClient(account: account, transport: refused, configuration: testConfiguration())
                    .putBlobFromURL(
                        container: "photos", name: "a.bin", source: Self.source, options: BlobUploadOptions(contentType: "image/jpeg"), md5: nil)
            }
            #expect(refused.requests.count == 1, "source status \(status.map(String.init) ?? "none") is not retried")
            #expect(error?.copySourceStatus == status && error?.isTransient == false)
            #expect(!"\(error!)".contains("sig="), "the source URL carries a SAS: never in a message")
        }
    }

    @Test func everyBlockOfALargeCopyIsReadOnTheListedETag() async throws {
        let size = BlobClient.singleCopyLimit + 1
        let transport = FakeTransport(responses: [TransportResponse(status: 201), TransportResponse(status: 201), TransportResponse(status: 201)])
        let client = BlobClient(account: account, transport: transport, configuration: testConfiguration())
        try await client.copyFromURL(
            container: "photos", name: "big.bin", source: Self.source, sourceETag: "\"0x8DE1\"", size: size,
            options: Self.stored, md5: "1B2M2Y8AsgTpgAmY7PhCfg==")
        let blocks = transport.requests.filter { $0.query.contains { $0.name == "comp" && $0.value == "block" } }
        #expect(blocks.count == 2)
        #expect(blocks.allSatisfy { $0.headers["x-ms-source-if-match"] == "\"0x8DE1\"" })
        let blockList = try #require(transport.requests.last)
        #expect(blockList.query.contains { $0.name == "comp" && $0.value == "blocklist" })
        Self.expectStored(blockList)

        let single = FakeTransport(responses: [TransportResponse(status: 201)])
        try await BlobClient(account: account, transport: single, configuration: testConfiguration())
            .copyFromURL(
                container: "photos", name: "small.bin", source: Self.source, sourceETag: "\"0x8DE2\"", size: 10, options: Self.stored, md5: nil)
        #expect(single.requests.count == 1 && single.requests[0].headers["x-ms-source-if-match"] == "\"0x8DE2\"")
        // Taken from the listing and given explicitly, not left to the service to copy: a copy
        // in one request stores what one in blocks (or streamed) does.
        Self.expectStored(single.requests[0])
        #expect(single.requests[0].headers["x-ms-copy-source-blob-properties"] == "false")
    }

    static let stored = BlobUploadOptions(
        contentType: "text/csv", cacheControl: "max-age=60", contentEncoding: "gzip", contentLanguage: "de-CH",
        contentDisposition: "attachment; filename=\"a.csv\"", metadata: ["origin": "source", "Owner": "ops"])

    static func expectStored(_ request: TransportRequest) {
        let h = request.headers
        #expect(
            h["x-ms-blob-content-type"] == "text/csv" && h["x-ms-blob-cache-control"] == "max-age=60" && h["x-ms-blob-content-encoding"] == "gzip")
        #expect(h["x-ms-blob-content-language"] == "de-CH" && h["x-ms-blob-content-disposition"] == "attachment; filename=\"a.csv\"")
        #expect(h["x-ms-meta-origin"] == "source" && h["x-ms-meta-Owner"] == "ops")
    }
}
