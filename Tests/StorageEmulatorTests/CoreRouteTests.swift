import AzureStorage
import Foundation
import Testing

@testable import StorageEmulator

/// The emulator's routes tested in process, without sockets, as Hummingbird's `.router` tests
/// do: the real clients (their signing, paths and parsing) send through a transport that hands
/// each request to ``StorageEmulatorCore/respond(_:service:)``. Fast enough to run for every
/// route; the real-socket tests (ClientAgainstEmulatorTests, the Python suite) check the wire.
@Suite struct CoreRouteTests {
    /// Hands requests to the core: port 1 is the Blob service, port 2 the Table service.
    struct CoreTransport: HTTPTransport {
        let core: StorageEmulatorCore

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            var request = request
            request.headers["Host"] = URL(string: request.origin)?.host.map { "\($0):1" } ?? "localhost"
            let service: EmulatorServiceKind = request.origin.hasSuffix(":2") ? .table : .blob
            switch await core.respond(request, service: service) {
            case .response(let response):
                return response
            case .streamed(let response, let body):
                var bytes = Data()
                try await body.stream { bytes.append($0) }
                var whole = response
                whole.body = bytes
                return whole
            case .dropConnection:
                throw URLError(.networkConnectionLost)
            }
        }
    }

    /// A core in memory and the development account's clients pointed at it.
    static func withCore(_ body: (BlobClient, TableClient) async throws -> Void) async throws {
        let core = try StorageEmulatorCore(configuration: EmulatorConfiguration(dataDirectory: nil, blobPort: 1, tablePort: 2))
        let account = StorageAccount(
            name: StorageAccount.developmentAccountName, credential: .sharedKey(AccountKey(base64: StorageAccount.developmentAccountKey)!),
            blobEndpoint: URL(string: "http://127.0.0.1:1/devstoreaccount1")!, tableEndpoint: URL(string: "http://127.0.0.1:2/devstoreaccount1")!)
        let transport = CoreTransport(core: core)
        do {
            try await body(BlobClient(account: account, transport: transport), TableClient(account: account, transport: transport))
        } catch {
            await core.store.close()
            throw error
        }
        await core.store.close()
    }

    @Test func blobsRoundTripWithMetadataHeadersAndTier() async throws {
        try await Self.withCore { blobs, _ in
            try await blobs.createContainer("docs", access: .private)
            let options = BlobUploadOptions(contentType: "text/csv", cacheControl: "max-age=60", metadata: ["author": "ops"])
            _ = try await blobs.putBlob(Data("x,y\n1,2\n".utf8), container: "docs", name: "a.csv", options: options)
            #expect(try await blobs.download(container: "docs", name: "a.csv") == Data("x,y\n1,2\n".utf8))
            try await blobs.setTier(container: "docs", name: "a.csv", tier: "Cool")
            let properties = try #require(try await blobs.properties(container: "docs", name: "a.csv"))
            #expect(properties.contentType == "text/csv" && properties.cacheControl == "max-age=60" && properties.metadata == ["author": "ops"])
            #expect(properties.accessTier == "Cool")
            var listed: [BlobProperties] = []
            for try await page in blobs.list(container: "docs") { listed += page }
            #expect(listed.map(\.name) == ["a.csv"] && listed.first?.accessTier == "Cool")
        }
    }

    @Test func errorsComeInEachServicesShapeWithNamedCodes() async throws {
        try await Self.withCore { blobs, tables in
            do {
                _ = try await blobs.download(container: "missing", name: "x")
                Issue.record("a missing container was read")
            } catch let error as AzureStorageError {
                #expect(error.status == 404 && error.code == .containerNotFound)
            }
            try await tables.createTable("events")
            _ = try await tables.insert(TableEntity(partitionKey: "p", rowKey: "r"), into: "events")
            do {
                _ = try await tables.insert(TableEntity(partitionKey: "p", rowKey: "r"), into: "events")
                Issue.record("a duplicate entity was inserted")
            } catch let error as AzureStorageError {
                #expect(error.status == 409 && error.code == .entityAlreadyExists)
            }
        }
    }

    @Test func tablesQueryAndBatchThroughTheCore() async throws {
        try await Self.withCore { _, tables in
            try await tables.createTable("events")
            let operations = (0..<5).map { i in
                TableBatchOperation.upsertReplace(TableEntity(partitionKey: "p", rowKey: "r\(i)", properties: ["N": .int32(Int32(i))]))
            }
            _ = try await tables.submit(operations, to: "events")
            var found: [Int32] = []
            for try await page in tables.query("events", filter: .compare("N", .ge, .int32(3))) {
                for decoded in page { if case .int32(let n)? = decoded.entity["N"] { found.append(n) } }
            }
            #expect(found.sorted() == [3, 4])
            #expect(try await tables.listTables() == ["events"])
        }
    }
}
