import AzseedTestSupport
import AzureStorage
import Crypto
import Foundation
import StorageEmulator
import Testing

/// The AzureStorage client (issue 3) against the emulator over real sockets.
@Suite struct ClientAgainstEmulatorTests {
    static let fast = ClientConfiguration(retry: .noRetry)

    static func md5(_ data: Data) -> String { Data(Insecure.MD5.hash(data: data)).base64EncodedString() }

    @Test func blobsRoundTrip() async throws {
        try await TestEmulator.withRunning { server in
            var blobs = BlobClient(account: server.account, configuration: Self.fast)
            try await blobs.createContainer("speakers", access: .container)
            #expect(try await blobs.ensureContainer("speakers", access: .container) == false)
            #expect(try await blobs.containerAccess("speakers") == .container)
            let photo = Data((0..<5000).map { UInt8($0 % 251) })
            try await blobs.putBlob(
                photo, container: "speakers", name: "BTubalinal.jpg",
                options: BlobUploadOptions(contentType: "image/jpeg", metadata: ["speaker": "Bret"]))
            #expect(try await blobs.download(container: "speakers", name: "BTubalinal.jpg") == photo)
            #expect(try await blobs.download(container: "speakers", name: "BTubalinal.jpg", range: 10...19) == photo[10..<20])
            let properties = try #require(try await blobs.properties(container: "speakers", name: "BTubalinal.jpg"))
            #expect(properties.contentType == "image/jpeg" && properties.contentLength == 5000)
            // Foundation on Linux re-cases header names (x-ms-meta-speaker arrives as X-Ms-Meta-Speaker);
            // metadata names are case-insensitive on Azure, so only the letters are compared.
            #expect(properties.metadata.map { [$0.key.lowercased(), $0.value] } == [["speaker", "Bret"]])
            #expect(properties.contentMD5 == Self.md5(photo))

            // A file over the single-upload limit goes up as blocks and keeps its MD5.
            blobs.singleUploadLimit = 10_000
            blobs.blockSize = 4096
            let file = try Scratch.folder("emulator").appendingPathComponent("big.bin")
            let big = Data((0..<30_000).map { UInt8(($0 * 7) % 256) })
            try big.write(to: file)
            try await blobs.upload(file: file, container: "speakers", name: "dir/big.bin")
            #expect(try await blobs.download(container: "speakers", name: "dir/big.bin") == big)
            #expect(try await blobs.properties(container: "speakers", name: "dir/big.bin")?.contentMD5 == Self.md5(big))
            // Downloaded to a file in 4 KiB ranges (8 of them, several in flight), byte for byte;
            // an empty blob too; a missing one fails and leaves no file behind.
            let back = file.deletingLastPathComponent().appendingPathComponent("back.bin")
            #expect(try await blobs.download(container: "speakers", name: "dir/big.bin", to: back) == big.count)
            #expect(try Data(contentsOf: back) == big)
            try await blobs.putBlob(Data(), container: "speakers", name: "empty")
            #expect(try await blobs.download(container: "speakers", name: "empty", to: back) == 0)
            #expect(try Data(contentsOf: back).isEmpty)
            let missing = file.deletingLastPathComponent().appendingPathComponent("missing.bin")
            await #expect(throws: AzureStorageError.self) { try await blobs.download(container: "speakers", name: "nope", to: missing) }
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: missing.deletingLastPathComponent().path).sorted() == ["back.bin", "big.bin"])

            for i in 0..<5 { try await blobs.putBlob(Data([UInt8(i)]), container: "speakers", name: "page/\(i)") }
            var names: [String] = []
            for try await page in blobs.list(container: "speakers", prefix: "page/", pageSize: 2) { names += page.map(\.name) }
            #expect(names == (0..<5).map { "page/\($0)" })
            try await blobs.deleteBlob(container: "speakers", name: "page/0")
            #expect(try await blobs.properties(container: "speakers", name: "page/0") == nil)
        }
    }

    @Test func tablesRoundTrip() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account, configuration: Self.fast)
            try await tables.createTable("events")
            #expect(try await tables.ensureTable("events") == false)
            #expect(try await tables.listTables() == ["events"])
            let when = EdmDateTime(year: 2026, month: 5, day: 1, hour: 18)
            var entity = TableEntity(
                partitionKey: "Events", rowKey: "r1",
                properties: [
                    "EventName": .string("Swift on Linux"), "EventDate": .dateTime(when), "Seats": .int32(40),
                    "Big": .int64(1 << 40), "Ratio": .double(2.0), "Id": .guid(UUID()), "Raw": .binary([0, 255]),
                ])
            let etag = try await tables.insert(entity, into: "events")
            let got = try #require(try await tables.get(partitionKey: "Events", rowKey: "r1", from: "events"))
            #expect(got.entity == entity)
            #expect(got.etag == etag)

            entity["Seats"] = .int32(41)
            try await tables.update(entity, in: "events", etag: try #require(etag))
            do {
                try await tables.update(entity, in: "events", etag: try #require(etag))
                Issue.record("an update with a stale ETag must fail")
            } catch let error as AzureStorageError {
                #expect(error.status == 412 && error.code == "UpdateConditionNotSatisfied")
            }

            let batch = (0..<100).map {
                TableBatchOperation.upsertReplace(
                    TableEntity(partitionKey: "Bulk", rowKey: String(format: "%03d", $0), properties: ["N": .int32(Int32($0))]))
            }
            let etags = try await tables.submit(batch, to: "events")
            #expect(etags.count == 100 && etags.allSatisfy { $0?.hasPrefix("W/\"datetime'") == true })
            do {
                try await tables.submit(
                    [.insert(TableEntity(partitionKey: "Bulk", rowKey: "new")), .insert(TableEntity(partitionKey: "Bulk", rowKey: "005"))],
                    to: "events")
                Issue.record("a batch inserting an existing entity must fail")
            } catch let error as AzureStorageError {
                #expect(error.failedOperation?.index == 1 && error.failedOperation?.rowKey == "005" && error.code == .entityAlreadyExists)
            }
            #expect(try await tables.get(partitionKey: "Bulk", rowKey: "new", from: "events") == nil)

            var seen: [Int32] = []
            for try await page in tables.query("events", filter: .compare("N", .ge, .int32(50)), top: 20) {
                #expect(page.count <= 20)
                for decoded in page { if case .int32(let n)? = decoded.entity["N"] { seen.append(n) } }
            }
            #expect(seen == Array(50..<100))
            try await tables.deleteTable("events")
            #expect(try await tables.tableExists("events") == false)
        }
    }

    /// A keys-only `$select` with a filter naming only keys is served without reading the
    /// bodies (the count beside a migration's scan): the same keys, in the same order, page by
    /// page, as the full query; a filter naming a property still reads them.
    @Test func keysOnlyQueriesReturnWhatFullQueriesDo() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account, configuration: Self.fast)
            try await tables.createTable("keys")
            for start in stride(from: 0, to: 2_500, by: 100) {
                let batch = (start..<start + 100).map { i in
                    TableBatchOperation.insert(
                        TableEntity(partitionKey: "p", rowKey: String(format: "%05d", i), properties: ["N": .int32(Int32(i)), "Text": .string("x")]))
                }
                try await tables.submit(batch, to: "keys")
            }
            func keys(_ filter: TableFilter?, select: [String]?) async throws -> [String] {
                var out: [String] = []
                for try await page in tables.query("keys", filter: filter, select: select) {
                    out += page.map { "\($0.entity.partitionKey)/\($0.entity.rowKey)/\($0.entity.properties.count)" }
                }
                return out
            }
            let past: TableFilter = .compare("RowKey", .gt, .string("00100"))
            let full = try await keys(past, select: nil).map { $0.replacingOccurrences(of: "/2", with: "/0") }
            #expect(full.count == 2_399)
            #expect(try await keys(past, select: ["PartitionKey", "RowKey"]) == full)
            #expect(try await keys(nil, select: ["PartitionKey", "RowKey", "Timestamp"]).count == 2_500)
            #expect(try await keys(.compare("N", .lt, .int32(10)), select: ["PartitionKey", "RowKey"]).count == 10)
        }
    }

    @Test func wrongKeyIsAuthenticationFailed() async throws {
        try await TestEmulator.withRunning { server in
            var account = server.account
            account.credential = .sharedKey(AccountKey(base64: Data(repeating: 7, count: 64).base64EncodedString())!)
            do {
                try await BlobClient(account: account, configuration: Self.fast).createContainer("nope")
                Issue.record("a wrong key must be refused")
            } catch let error as AzureStorageError {
                #expect(error.status == 403 && error.code == "AuthenticationFailed")
                #expect(!error.description.contains("Eby8vdM02"))
            }
        }
    }

    /// The client's retries carry idempotent writes through injected faults. A dropped
    /// connection under a request with a body stalls libcurl until the transport's timeout
    /// (it tries to resend on a fresh connection and cannot rewind), hence the short timeout.
    @Test func retriesRideThroughInjectedFaults() async throws {
        try await TestEmulator.withRunning(faultRate: 0.15) { server in
            let configuration = ClientConfiguration(retry: RetryPolicy(maxRetries: 12, initialDelay: .milliseconds(1), maxDelay: .milliseconds(5)))
            let tables = TableClient(account: server.account, transport: CurlTransport(timeout: 2), configuration: configuration)
            _ = try await tables.ensureTable("chaos")
            for i in 0..<40 {
                let entity = TableEntity(partitionKey: "p", rowKey: String(i), properties: ["v": .int32(Int32(i))])
                _ = try await tables.upsert(entity, into: "chaos")
            }
            var count = 0
            for try await page in tables.query("chaos") { count += page.count }
            #expect(count == 40)
        }
    }

    /// The embedded default: data written through one in-process emulator is there for the next.
    @Test func embeddedStoragePersistsAcrossStarts() async throws {
        let directory = try Scratch.folder("emulator").appendingPathComponent("storage")
        let first = try await Self.started(directory)
        try await TableClient(account: first.account, configuration: Self.fast).createTable("kept")
        try await TableClient(account: first.account, configuration: Self.fast).insert(TableEntity(partitionKey: "p", rowKey: "r"), into: "kept")
        try await BlobClient(account: first.account, configuration: Self.fast).createContainer("kept")
        try await BlobClient(account: first.account, configuration: Self.fast).putBlob(Data("hi".utf8), container: "kept", name: "b")
        await first.stop()
        let second = try await Self.started(directory)
        #expect(try await TableClient(account: second.account, configuration: Self.fast).get(partitionKey: "p", rowKey: "r", from: "kept") != nil)
        #expect(try await BlobClient(account: second.account, configuration: Self.fast).download(container: "kept", name: "b") == Data("hi".utf8))
        #expect(second.account.tableEndpoint.host == "127.0.0.1")
        await second.stop()
    }

    static func started(_ directory: URL, command: String = "azseed test") async throws -> EmulatorServer {
        guard case .started(let server) = try await EmbeddedStorage.open(dataDirectory: directory, command: command) else {
            throw ServedElsewhere()
        }
        return server
    }

    struct ServedElsewhere: Error {}

    /// One owner per data folder: a second opener is refused, naming the owner, while the
    /// first runs; it talks to the first instead when that is an 'azseed emulator'; the
    /// folder is free again once the owner stops.
    @Test func aDataFolderHasOneOwner() async throws {
        let directory = try Scratch.folder("emulator").appendingPathComponent("storage")
        let planning = try await Self.started(directory, command: "azseed plan")
        do {
            _ = try await EmbeddedStorage.open(dataDirectory: directory, command: "azseed apply")
            Issue.record("a second owner must be refused")
        } catch let busy as DataFolderBusy {
            #expect(busy.owner?.command == "azseed plan" && busy.owner?.pid == getpid())
            #expect(busy.description.contains("in use by 'azseed plan'"))
        }
        await planning.stop()

        let serving = try await Self.started(directory, command: "azseed emulator")
        try await BlobClient(account: serving.account, configuration: Self.fast).createContainer("shared")
        guard case .served(let owner, let account) = try await EmbeddedStorage.open(dataDirectory: directory, command: "azseed apply") else {
            Issue.record("a folder served by 'azseed emulator' must be reached through it")
            return
        }
        #expect(owner.blobEndpoint == serving.account.blobEndpoint)
        #expect(try await BlobClient(account: StorageAccount(account), configuration: Self.fast).containerAccess("shared") != nil)
        await serving.stop()
        let again = try await Self.started(directory)
        await again.stop()
    }

    @Test func busyPortIsAClearError() async throws {
        try await TestEmulator.withRunning { server in
            do {
                _ = try await EmulatorServer.start(EmulatorConfiguration(dataDirectory: nil, blobPort: server.blobPort, tablePort: 0))
                Issue.record("a port in use must be refused")
            } catch let error as EmulatorStartError {
                #expect(error.description.contains("cannot listen"))
            }
        }
    }
}
