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
            .putBlobFromURL(container: "photos", name: "a.bin", source: Self.source, contentType: "image/jpeg", md5: nil)
        #expect(busy.requests.count == 2 && sleeps.recorded.count == 1)

        for status in [nil, 403, 404, 409] as [Int?] {
            let refused = FakeTransport(responses: [Self.cannotVerify(sourceStatus: status), TransportResponse(status: 201)])
            let error = await #expect(throws: AzureStorageError.self) {
                try await BlobClient(account: account, transport: refused, configuration: testConfiguration())
                    .putBlobFromURL(container: "photos", name: "a.bin", source: Self.source, contentType: "image/jpeg", md5: nil)
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
        try await client.copyFromURL(container: "photos", name: "big.bin", source: Self.source, sourceETag: "\"0x8DE1\"", size: size,
                                     contentType: "application/octet-stream", md5: "1B2M2Y8AsgTpgAmY7PhCfg==")
        let blocks = transport.requests.filter { $0.query.contains { $0.name == "comp" && $0.value == "block" } }
        #expect(blocks.count == 2)
        #expect(blocks.allSatisfy { $0.headers["x-ms-source-if-match"] == "\"0x8DE1\"" })
        #expect(transport.requests.last?.query.contains { $0.name == "comp" && $0.value == "blocklist" } == true)

        let single = FakeTransport(responses: [TransportResponse(status: 201)])
        try await BlobClient(account: account, transport: single, configuration: testConfiguration())
            .copyFromURL(container: "photos", name: "small.bin", source: Self.source, sourceETag: "\"0x8DE2\"", size: 10, contentType: "text/plain", md5: nil)
        #expect(single.requests.count == 1 && single.requests[0].headers["x-ms-source-if-match"] == "\"0x8DE2\"")
    }
}
