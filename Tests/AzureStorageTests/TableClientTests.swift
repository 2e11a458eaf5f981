import AzureStorage
import Foundation
import Testing

@Suite struct TableClientTests {
    let account = StorageAccount.development()

    @Test func queryFollowsContinuationsThroughEmptyPages() async throws {
        let transport = FakeTransport(responses: [
            json(
                200, #"{"value":[{"PartitionKey":"p","RowKey":"1","N":1}]}"#,
                [("x-ms-continuation-NextPartitionKey", "p"), ("x-ms-continuation-NextRowKey", "2")]),
            json(200, #"{"value":[]}"#, [("x-ms-continuation-NextPartitionKey", "p"), ("x-ms-continuation-NextRowKey", "3")]),
            json(200, #"{"value":[{"PartitionKey":"p","RowKey":"3","N":2.0}]}"#),
        ])
        let client = TableClient(account: account, transport: transport, configuration: testConfiguration())
        var rows: [TableEntity] = []
        for try await page in client.query("events", filter: .partition("p")) { rows += page.map(\.entity) }
        #expect(rows.map(\.rowKey) == ["1", "3"])
        #expect(rows[0]["N"] == .int32(1))
        #expect(rows[1]["N"] == .double(2))
        let sent = transport.requests
        #expect(sent.count == 3)
        #expect(sent[0].path == "/devstoreaccount1/events()")
        #expect(sent[0].query.first! == ("$filter", "PartitionKey eq 'p'"))
        #expect(sent[1].query.contains { $0 == ("NextPartitionKey", "p") } && sent[1].query.contains { $0 == ("NextRowKey", "2") })
        #expect(sent[2].query.contains { $0 == ("NextRowKey", "3") })
        #expect(sent[0].headers["Authorization"]?.hasPrefix("SharedKey devstoreaccount1:") == true)
        #expect(sent[0].headers["x-ms-date"] == "Sat, 21 Nov 2026 09:33:14 GMT")
    }

    /// A count follows continuations through empty pages, asks for keys only, and counts
    /// without building entities; a page that is not JSON is an error, never a short count.
    @Test func countFollowsContinuationsAndReadsKeysOnly() async throws {
        let transport = FakeTransport(responses: [
            json(
                200, #"{"value":[{"PartitionKey":"p","RowKey":"1"},{"PartitionKey":"p","RowKey":"2","odata.etag":"W/\"x\""}]}"#,
                [("x-ms-continuation-NextPartitionKey", "p"), ("x-ms-continuation-NextRowKey", "3")]),
            json(200, #"{"value":[]}"#, [("x-ms-continuation-NextPartitionKey", "q")]),
            json(200, #"{"odata.metadata":"m","value":[{"PartitionKey":"q","RowKey":"\u00e9"}]}"#),
        ])
        let client = TableClient(account: account, transport: transport, configuration: testConfiguration())
        #expect(try await client.count("events", filter: .partition("p")) == 3)
        let sent = transport.requests
        #expect(sent.count == 3 && sent.allSatisfy { $0.query.contains { $0 == ("$select", "PartitionKey,RowKey") } })
        #expect(sent[1].query.contains { $0 == ("NextRowKey", "3") } && sent[2].query.contains { $0 == ("NextPartitionKey", "q") })
        #expect(!sent[2].query.contains { $0.0 == "NextRowKey" })
        for bad in [#"{"value":[{"PartitionKey":"p"},]}"#, #"{"value":[1]}"#, #"{"value":[{"a":"\q"}]}"#, #"{"value":{}}"#] {
            let refused = TableClient(account: account, transport: FakeTransport(responses: [json(200, bad)]), configuration: testConfiguration())
            await #expect(throws: AzureStorageError.self, "\(bad)") { try await refused.count("events") }
        }
        // The count agrees with the entities a page decodes to.
        let page = #"{"value":[{"PartitionKey":"p","RowKey":"a","N":[1,{"x":null}]},{"PartitionKey":"p","RowKey":"b"}]}"#
        #expect(try EntityJSONReader.pageCount(Array(page.utf8)) == 2)
    }

    @Test func entityKeysAreQuotedAndEncoded() {
        #expect(TableClient.entityPath("p k'1", "r/x") == "(PartitionKey='p%20k%27%271',RowKey='r%2Fx')")
    }

    @Test func filterLiteralsAreEscapedAndTyped() {
        let date = EdmDateTime(iso8601: "2024-01-02T03:04:05Z")!
        let f: TableFilter = .and(.equal("Name", .string("O'Brien")), .or(.compare("Big", .gt, .int64(5)), .compare("When", .lt, .dateTime(date))))
        #expect(f.description == "(Name eq 'O''Brien') and ((Big gt 5L) or (When lt datetime'2024-01-02T03:04:05.0000000Z'))")
        #expect(TableFilter.literal(.double(2)) == "2.0")
        #expect(TableFilter.literal(.binary([0xAB, 1])) == "X'ab01'")
        #expect(TableFilter.literal(.guid(UUID(uuidString: "12345678-1234-5678-1234-567812345678")!)) == "guid'12345678-1234-5678-1234-567812345678'")
        #expect(f.comparisonCount == 3)
    }

    @Test func batchBodyFollowsTheCapturedFormat() throws {
        let ops: [TableBatchOperation] = [
            .insert(TableEntity(partitionKey: "p", rowKey: "1", properties: ["A": .int32(1)])),
            .delete(partitionKey: "p", rowKey: "2", etag: "*"),
        ]
        let (body, type) = TableBatchCodec.encode(ops, tableURL: "http://127.0.0.1:10002/devstoreaccount1/t", boundary: "B", changeset: "C")
        #expect(type == "multipart/mixed; boundary=batch_B")
        let text = String(decoding: body, as: UTF8.self)
        #expect(
            text.hasPrefix(
                "--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_C\r\n\r\n--changeset_C\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: 0\r\n\r\nPOST http://127.0.0.1:10002/devstoreaccount1/t HTTP/1.1\r\n"
            ))
        #expect(text.contains("\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"1\",\"A\":1}\r\n--changeset_C\r\n"))
        #expect(text.contains("DELETE http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='p',RowKey='2') HTTP/1.1\r\nIf-Match: *\r\n"))
        #expect(text.hasSuffix("--changeset_C--\r\n\r\n--batch_B--\r\n"))
    }

    @Test func batchRulesAreCheckedBeforeSending() async throws {
        let transport = FakeTransport(responses: [])
        let client = TableClient(account: account, transport: transport, configuration: testConfiguration())
        let e = { (pk: String, rk: String) in TableBatchOperation.upsertReplace(TableEntity(partitionKey: pk, rowKey: rk)) }
        let cases: [([TableBatchOperation], String)] = [
            ((0..<101).map { e("p", "\($0)") }, "at most 100 operations"),
            ([e("p", "1"), e("q", "2")], "operation 1 has PartitionKey 'q'"),
            ([e("p", "1"), e("p", "1")], "operations 0 and 1 both change RowKey '1'"),
            ([e("p", "a#b")], "must not contain '#'"),
            (
                [.upsertReplace(TableEntity(partitionKey: "p", rowKey: "1", properties: ["Big": .string(String(repeating: "x", count: 40_000))]))],
                "longer than 32K"
            ),
        ]
        for (ops, expected) in cases {
            await #expect(performing: { try await client.submit(ops, to: "events") }, throws: { "\($0)".contains(expected) })
        }
        let huge = (0..<100).map { i in
            TableBatchOperation.upsertReplace(
                TableEntity(
                    partitionKey: "p", rowKey: "\(i)",
                    properties: ["S": .string(String(repeating: "y", count: 30_000)), "T": .string(String(repeating: "z", count: 30_000))]))
        }
        await #expect(performing: { try await client.submit(huge, to: "events") }, throws: { "\($0)".contains("Azure allows 4 MiB") })
        #expect(transport.requests.isEmpty)
    }

    static func batchResponse(_ parts: [(Int, String, String)]) -> TransportResponse {
        var body = "--batchresponse_X\r\nContent-Type: multipart/mixed; boundary=changesetresponse_Y\r\n\r\n"
        for (status, reason, payload) in parts {
            body +=
                "--changesetresponse_Y\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 \(status) \(reason)\r\nX-Content-Type-Options: nosniff\r\nETag: W/\"datetime'2026-11-21T09%3A33%3A14.1234567Z'\"\r\n"
            if !payload.isEmpty { body += "Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n" }
            body += "\r\n\(payload)\r\n"
        }
        body += "--changesetresponse_Y--\r\n--batchresponse_X--\r\n"
        return TransportResponse(
            status: 202, headers: HeaderFields([("Content-Type", "multipart/mixed; boundary=batchresponse_X")]), body: Data(body.utf8))
    }

    @Test func batchSuccessReturnsEveryETag() async throws {
        let transport = FakeTransport(responses: [Self.batchResponse([(204, "No Content", ""), (204, "No Content", "")])])
        let client = TableClient(account: account, transport: transport, configuration: testConfiguration())
        let etags = try await client.submit(
            [.upsertMerge(TableEntity(partitionKey: "p", rowKey: "1")), .upsertMerge(TableEntity(partitionKey: "p", rowKey: "2"))], to: "events")
        #expect(etags == Array(repeating: "W/\"datetime'2026-11-21T09%3A33%3A14.1234567Z'\"", count: 2))
        #expect(transport.requests[0].path == "/devstoreaccount1/$batch")
        #expect(transport.requests[0].headers["Content-Type"]?.hasPrefix("multipart/mixed; boundary=batch_") == true)
    }

    @Test func batchFailureNamesTheOperation() async throws {
        let error =
            #"{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"1:The specified entity already exists.\nRequestId:abc"}}}"#
        let transport = FakeTransport(responses: [Self.batchResponse([(409, "Conflict", error)])])
        let client = TableClient(account: account, transport: transport, configuration: testConfiguration())
        let ops: [TableBatchOperation] = [
            .insert(TableEntity(partitionKey: "Events", rowKey: "a")), .insert(TableEntity(partitionKey: "Events", rowKey: "b")),
        ]
        await #expect(
            performing: { try await client.submit(ops, to: "events") },
            throws: { error in
                guard let e = error as? AzureStorageError, let failed = e.failedOperation else { return false }
                return failed.index == 1 && failed.rowKey == "b" && e.code == .entityAlreadyExists && e.status == 409
                    && e.message == "The specified entity already exists."
                    && e.kind == .service && e.description.contains("at operation 1 (PartitionKey 'Events', RowKey 'b')")
            })
    }

    @Test func entityDecodingHonoursAnnotations() throws {
        let text =
            #"{"odata.etag":"W/\"x\"","PartitionKey":"p","RowKey":"r","Timestamp":"2026-11-21T09:33:14.1234567Z","Big":"12","Big@odata.type":"Edm.Int64","D":"NaN","D@odata.type":"Edm.Double","G":"12345678-1234-5678-1234-567812345678","G@odata.type":"Edm.Guid","B":"AQID","B@odata.type":"Edm.Binary","T":"2024-01-01T00:00:00Z","T@odata.type":"Edm.DateTime","I":7,"F":1.5,"S":"s","Y":true}"#
        let decoded = try EntityJSONReader.entity(Array(text.utf8))
        let e = decoded.entity
        #expect(decoded.etag == "W/\"x\"")
        #expect(decoded.timestamp?.iso8601 == "2026-11-21T09:33:14.1234567Z")
        #expect(e["Big"] == .int64(12) && e["I"] == .int32(7) && e["F"] == .double(1.5) && e["S"] == .string("s") && e["Y"] == .boolean(true))
        #expect(e["D"] == .double(.nan) && e["B"] == .binary([1, 2, 3]))
        #expect(e["T"] == .dateTime(EdmDateTime(iso8601: "2024-01-01")!))
        #expect(e.properties.count == 9)
        // Encoding then decoding gives the same entity, types included.
        let again = try EntityJSONReader.entity(EntityJSONEncoder.encode(e)).entity
        #expect(again == e)
    }

    /// Azure answers a `$select` naming a property an entity lacks with `null` for it: a query
    /// page (and a Get Entity with `$select`) reads that as absent — once a lookup's read of
    /// another table failed whole on it. A request body or stored entity with `null` is still
    /// refused, as Azure refuses it.
    @Test func aSelectedPropertyTheEntityLacksIsAbsentNotAnError() throws {
        let page = #"{"value":[{"PartitionKey":"p","RowKey":"a","Name":"Oslo"},{"PartitionKey":"p","RowKey":"b","Name":null}]}"#
        let entities = try EntityJSONReader.page(Array(page.utf8))
        #expect(entities.map { $0.entity["Name"] } == [.string("Oslo"), nil])
        #expect(throws: EntityDecodingError.self) { try EntityJSONReader.entity(Array(#"{"PartitionKey":"p","RowKey":"b","Name":null}"#.utf8)) }
        #expect(try EntityJSONReader.entity(Array(#"{"PartitionKey":"p","RowKey":"b","Name":null}"#.utf8), nullIsAbsent: true).entity["Name"] == nil)
    }

    /// A full-metadata page's `odata.id`, `odata.editLink` and `odata.type` are skipped, not
    /// built: still checked as JSON (a control character or a bad escape in one is refused, an
    /// escape read), and one that is an annotation still has to annotate a property.
    @Test func metadataMembersAreSkippedButStillChecked() throws {
        let entity =
            #"{"odata.type":"a.t","odata.id":"http://h/a/t(PartitionKey='p',RowKey='r\u00e9')","odata.etag":"W/\"e\"","odata.editLink":"t()","PartitionKey":"p","RowKey":"r","N":1}"#
        let read = try EntityJSONReader.page(Array("{\"value\":[\(entity)]}".utf8))
        #expect(read.count == 1 && read[0].etag == "W/\"e\"" && read[0].entity["N"] == .int32(1) && read[0].entity.properties.count == 1)
        for bad in [#""odata.id":"a\u12"#, "\"odata.id\":\"a\u{1}b\"", #""odata.id":"a\qb""#, #""odata.id":"unterminated"#, #""odata.id":[1,"#] {
            #expect(throws: (any Error).self, "\(bad)") {
                try EntityJSONReader.page(Array("{\"value\":[{\(bad),\"PartitionKey\":\"p\",\"RowKey\":\"r\"}]}".utf8))
            }
        }
        #expect(throws: EntityDecodingError.self) {
            try EntityJSONReader.entity(Array(#"{"odata.x@odata.type":"Edm.Int64","PartitionKey":"p","RowKey":"r"}"#.utf8))
        }
    }
}

/// Names are told apart by their bytes, escapes decoded first: an escaped name is the name
/// it spells, whether a key, the ETag, an annotation or a property.
@Suite struct EntityNameBytesTests {
    @Test func escapedNamesAreTheNamesTheySpell() throws {
        let entity =
            #"{"\u0050artitionKey":"p","Row\u004bey":"r","odata.\u0065tag":"W/\"x\"","X@odata.t\u0079pe":"Edm.Int64","X":"5","N\u00e9":1,"odata.i\u0064":"skipped","Timest\u0061mp":"2026-01-02T03:04:05Z"}"#
        let read = try EntityJSONReader.entity(Array(entity.utf8))
        #expect(read.entity.partitionKey == "p" && read.entity.rowKey == "r" && read.etag == "W/\"x\"")
        #expect(read.entity["X"] == .int64(5) && read.entity["N\u{e9}"] == .int32(1) && read.entity.properties.count == 2)
        #expect(read.timestamp == EdmDateTime(iso8601: "2026-01-02T03:04:05Z"))
        // A name the escape makes something else is that something else.
        #expect(throws: EntityDecodingError.self) {
            try EntityJSONReader.entity(Array(#"{"PartitionKey":"p","RowKey":"r","Y@odata.typ\u0065":5}"#.utf8))
        }
        #expect(throws: (any Error).self) { try EntityJSONReader.entity(Array(#"{"PartitionKey":"p","RowKey":"r","\u00":1}"#.utf8)) }
    }
}

/// A caller that stops reading a query early: the pages read ahead for it are cancelled with
/// the iterator, and no page after them is asked for.
@Suite struct TableQueryReadAheadTests {
    /// Answers like `base`, each after `delay` (cancelled with its task, as a real transfer is).
    final class SlowTransport: HTTPTransport {
        let base: FakeTransport
        let delay: Duration
        init(_ base: FakeTransport, delay: Duration) {
            self.base = base
            self.delay = delay
        }
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let response = try await base.send(request)
            try await Task.sleep(for: delay)
            return response
        }
    }

    @Test func aCallerThatStopsEarlyAsksForNoPageAfterTheOneAhead() async throws {
        let pages = (1...6).map { n in
            json(
                200, #"{"value":[{"PartitionKey":"p","RowKey":"\#(n)"}]}"#,
                [("x-ms-continuation-NextPartitionKey", "p"), ("x-ms-continuation-NextRowKey", "\(n + 1)")])
        }
        let fake = FakeTransport(responses: pages)
        let client = TableClient(
            account: StorageAccount.development(), transport: SlowTransport(fake, delay: .milliseconds(100)),
            configuration: testConfiguration())
        for try await page in client.query("events", filter: nil) {
            #expect(page.map(\.entity.rowKey) == ["1"])
            break
        }
        // Long enough for two more pages, were they asked for.
        try await Task.sleep(for: .milliseconds(500))
        #expect(fake.requests.count == 2, "asked for \(fake.requests.count) pages after the caller took one")
    }
}
