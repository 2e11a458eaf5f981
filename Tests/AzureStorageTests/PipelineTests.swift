import AzureStorage
import Foundation
import Testing

@Suite struct PipelineTests {
    let account = StorageAccount.development()

    @Test func transientFailuresAreRetriedWithBackoff() async throws {
        let sleeps = SleepRecorder()
        let busy = TransportResponse(status: 503, headers: HeaderFields([("x-ms-error-code", "ServerBusy")]))
        let transport = FakeTransport([
            .success(busy), .failure(URLError(.networkConnectionLost)), .success(busy),
            .success(TransportResponse(status: 201)),
        ])
        let client = BlobClient(account: account, transport: transport, configuration: testConfiguration(sleeps))
        try await client.createContainer("speakers", access: .container)
        #expect(transport.requests.count == 4)
        #expect(sleeps.recorded == [.milliseconds(100), .milliseconds(200), .milliseconds(400)])
        #expect(transport.requests[0].headers["x-ms-blob-public-access"] == "container")
    }

    @Test func retryAfterIsHonoured() async throws {
        let sleeps = SleepRecorder()
        let transport = FakeTransport(responses: [
            TransportResponse(status: 429, headers: HeaderFields([("Retry-After", "2")])), TransportResponse(status: 201),
        ])
        try await BlobClient(account: account, transport: transport, configuration: testConfiguration(sleeps)).createContainer("speakers")
        #expect(sleeps.recorded == [.seconds(2)])
    }

    @Test func retriesStopAtTheLimitWithTheLastError() async throws {
        let sleeps = SleepRecorder()
        let timeout = TransportResponse(status: 500, headers: HeaderFields([("x-ms-error-code", "OperationTimedOut")]))
        let transport = FakeTransport(responses: Array(repeating: timeout, count: 5))
        let client = TableClient(account: account, transport: transport, configuration: testConfiguration(sleeps, retries: 2))
        await #expect(performing: { try await client.createTable("events") }, throws: { ($0 as? AzureStorageError)?.code == "OperationTimedOut" })
        #expect(transport.requests.count == 3)
    }

    @Test func clientErrorsAreNotRetriedAndAreReadable() async throws {
        let body =
            #"<?xml version="1.0" encoding="utf-8"?><Error><Code>PublicAccessNotPermitted</Code><Message>Public access is not permitted on this storage account.</Message></Error>"#
        let transport = FakeTransport(responses: [
            TransportResponse(status: 409, headers: HeaderFields([("x-ms-request-id", "r-1")]), body: Data(body.utf8))
        ])
        let client = BlobClient(account: account, transport: transport, configuration: testConfiguration())
        await #expect(
            performing: { try await client.createContainer("speakers", access: .container) },
            throws: { error in
                "\(error)"
                    == "Create Container http://127.0.0.1:10000/devstoreaccount1/speakers failed: 409 PublicAccessNotPermitted: Public access is not permitted on this storage account. (request id r-1)"
            })
        #expect(transport.requests.count == 1)
    }

    @Test func tableErrorsComeFromODataJSON() async throws {
        let transport = FakeTransport(responses: [
            json(409, #"{"odata.error":{"code":"TableAlreadyExists","message":{"lang":"en-US","value":"The table specified already exists."}}}"#)
        ])
        let client = TableClient(account: account, transport: transport, configuration: testConfiguration())
        #expect(try await client.ensureTable("events") == false)
    }

    @Test func sasTokensGoInTheQueryAndNeverInErrors() async throws {
        let sas = try ConnectionString.parse(
            "BlobEndpoint=https://acct.blob.core.windows.net;TableEndpoint=https://acct.table.core.windows.net;SharedAccessSignature=sv=2022-11-02&sig=TOPSECRET"
        )
        let transport = FakeTransport(responses: [
            TransportResponse(status: 403, headers: HeaderFields([("x-ms-error-code", "AuthenticationFailed")]))
        ])
        let client = BlobClient(account: sas, transport: transport, configuration: testConfiguration())
        await #expect(
            performing: { try await client.deleteBlob(container: "speakers", name: "a b.jpg") },
            throws: { error in
                !"\(error)".contains("TOPSECRET") && "\(error)".contains("https://acct.blob.core.windows.net/speakers/a%20b.jpg")
            })
        #expect(transport.requests[0].urlString.hasSuffix("?sv=2022-11-02&sig=TOPSECRET"))
        #expect(transport.requests[0].headers["Authorization"] == nil)
    }

    @Test func invalidNamesFailBeforeAnyRequest() async throws {
        let transport = FakeTransport(responses: [])
        let blobs = BlobClient(account: account, transport: transport, configuration: testConfiguration())
        await #expect(throws: AzureStorageError.self) { try await blobs.createContainer("Bad_Name") }
        await #expect(throws: AzureStorageError.self) { try await blobs.putBlob(Data(), container: "ok-name", name: "trailing.") }
        let tables = TableClient(account: account, transport: transport, configuration: testConfiguration())
        await #expect(throws: AzureStorageError.self) { try await tables.createTable("1abc") }
        await #expect(throws: AzureStorageError.self) { try await tables.insert(TableEntity(partitionKey: "a?b", rowKey: "r"), into: "events") }
        #expect(transport.requests.isEmpty)
    }

    @Test func blobListingPagesByMarker() async throws {
        let page1 =
            #"<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="http://127.0.0.1:10000/devstoreaccount1/" ContainerName="c"><MaxResults>1</MaxResults><Blobs><Blob><Name>a &amp; b.jpg</Name><Properties><Content-Length>5</Content-Length><Content-Type>image/jpeg</Content-Type><Content-MD5>XUFAKrxLKna5cZ2REBfFkg==</Content-MD5><Etag>0x1</Etag></Properties><Metadata><k>v</k></Metadata></Blob></Blobs><NextMarker>m2</NextMarker></EnumerationResults>"#
        let page2 =
            #"<?xml version="1.0" encoding="utf-8"?><EnumerationResults ContainerName="c"><Blobs><Blob><Name>z.jpg</Name><Properties><Content-Length>0</Content-Length><Content-Type /><Content-MD5 /></Properties><Metadata /></Blob></Blobs><NextMarker /></EnumerationResults>"#
        let transport = FakeTransport(responses: [
            TransportResponse(status: 200, body: Data(page1.utf8)), TransportResponse(status: 200, body: Data(page2.utf8)),
        ])
        let client = BlobClient(account: account, transport: transport, configuration: testConfiguration())
        var blobs: [BlobProperties] = []
        for try await page in client.list(container: "cc1", pageSize: 1) { blobs += page }
        #expect(
            blobs == [
                BlobProperties(
                    name: "a & b.jpg", contentLength: 5, contentType: "image/jpeg", contentMD5: "XUFAKrxLKna5cZ2REBfFkg==", etag: "0x1",
                    metadata: ["k": "v"]),
                BlobProperties(name: "z.jpg", contentLength: 0),
            ])
        #expect(transport.requests[1].query.contains { $0 == ("marker", "m2") })
    }

    @Test func largeFilesUploadAsBlocksReadFromDisk() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("azseed-blocks-\(UUID().uuidString)")
        let bytes = Data((0..<2_500).map { UInt8($0 % 251) })
        try bytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let transport = FakeTransport(responses: Array(repeating: TransportResponse(status: 201), count: 4))
        var client = BlobClient(account: account, transport: transport, configuration: testConfiguration())
        client.singleUploadLimit = 1_000
        client.blockSize = 1_000
        try await client.upload(file: file, container: "cc1", name: "big.bin", options: BlobUploadOptions(contentType: "application/x-test"))
        // Blocks travel in parallel (their order on the wire may vary); the list comes last.
        let sent = transport.requests
        #expect(sent.map { $0.query.first?.value } == ["block", "block", "block", "blocklist"])
        let blocks = sent[0...2].sorted { $0.query[1].value < $1.query[1].value }
        #expect(blocks.map(\.body.count) == [1_000, 1_000, 500])
        #expect(sent.allSatisfy { $0.headers["Content-Length"] == String($0.body.count) })
        #expect(sent[3].headers["x-ms-blob-content-type"] == "application/x-test")
        #expect(sent[3].headers["x-ms-blob-content-md5"] == "urvZ1j3KmcuNTMBUunCCnQ==")
        #expect(String(decoding: sent[3].body, as: UTF8.self).contains("<Latest>\(blocks[2].query[1].value)</Latest></BlockList>"))
    }
}

@Suite struct RetryPolicyTests {
    @Test func backoffDoublesWithJitterAndIsCapped() {
        let policy = RetryPolicy(maxRetries: 10, initialDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: 0.5)
        #expect(policy.delay(attempt: 1, retryAfter: nil, unit: 0) == .milliseconds(50))
        #expect(policy.delay(attempt: 1, retryAfter: nil, unit: 0.999_999) < .milliseconds(100))
        #expect(policy.delay(attempt: 3, retryAfter: nil, unit: 0) == .milliseconds(200))
        #expect(policy.delay(attempt: 9, retryAfter: nil, unit: 0) == .milliseconds(500))
        #expect(policy.delay(attempt: 2, retryAfter: "0.25", unit: 0) == .milliseconds(250))
        #expect(policy.delay(attempt: 2, retryAfter: "600", unit: 0) == .seconds(1))
    }
}

@Suite struct ContainerAccessTests {
    @Test func accessLevelsAndMissingContainers() async throws {
        let transport = FakeTransport(responses: [
            TransportResponse(status: 200, headers: HeaderFields([("x-ms-blob-public-access", "blob")])),
            TransportResponse(status: 200),
            TransportResponse(status: 404, headers: HeaderFields([("x-ms-error-code", "ContainerNotFound")])),
        ])
        let client = BlobClient(account: .development(), transport: transport, configuration: testConfiguration())
        #expect(try await client.containerAccess("speakers") == .blob)
        #expect(try await client.containerProperties("speakers") == PublicAccess.private)
        #expect(try await client.containerAccess("speakers") == nil)
        #expect(transport.requests[0].query.map(\.value) == ["container", "acl"])
        #expect(transport.requests[1].query.map(\.value) == ["container"])
    }
}
