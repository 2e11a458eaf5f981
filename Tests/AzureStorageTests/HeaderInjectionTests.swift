import AzureStorage
import Foundation
import Testing

/// A header value that would end its header and start another — metadata from a dataset, a
/// snapshot or a copy's source — is refused before anything is sent (an attacker's dataset put
/// `x-ms-meta-…` and `x-ms-blob-content-type` headers into requests a victim's SAS authorised).
@Suite struct HeaderInjectionTests {
    @Test func aLineBreakOrNULInAHeaderIsNeverSent() async throws {
        for value in ["v\r\nx-ms-meta-injected: yes", "v\nx", "v\rx", "v\u{0}x"] {
            let transport = FakeTransport(responses: [TransportResponse(status: 201)])
            let client = BlobClient(account: StorageAccount.development(), transport: transport, configuration: testConfiguration())
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("azseed-header-\(UUID().uuidString)")
            try Data("x".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let error = await #expect(throws: AzureStorageError.self) {
                try await client.upload(file: file, container: "photos", name: "b", options: BlobUploadOptions(metadata: ["k": value]))
            }
            #expect(transport.requests.isEmpty)
            #expect(error?.isTransient == false)
            #expect("\(error.map { "\($0)" } ?? "")".contains("line break or NUL"))
        }
    }
}
