import AzureStorage
import Foundation
import Testing

@testable import StorageEmulator

@Suite struct BatchRequestParserTests {
    @Test func readsWhatTheClientWrites() throws {
        let ops: [TableBatchOperation] = [
            .insert(TableEntity(partitionKey: "p", rowKey: "1", properties: ["A": .string("line\nbreak")])),
            .upsertMerge(TableEntity(partitionKey: "p", rowKey: "2 '")),
            .delete(partitionKey: "p", rowKey: "3", etag: "*"),
        ]
        let (body, contentType) = TableBatchCodec.encode(ops, tableURL: "http://127.0.0.1:10002/devstoreaccount1/events")
        let parsed = try BatchRequestParser.parse(body, contentType: contentType)
        #expect(parsed.map(\.method) == ["POST", "MERGE", "DELETE"])
        #expect(parsed[0].url == "http://127.0.0.1:10002/devstoreaccount1/events")
        #expect(parsed[1].url == "http://127.0.0.1:10002/devstoreaccount1/events(PartitionKey='p',RowKey='2%20%27%27')")
        #expect(parsed[2].headers["If-Match"] == "*")
        #expect(parsed[2].body.isEmpty)
        let entity = try EntityJSONReader.entity(Array(parsed[0].body)).entity
        #expect(entity["A"] == .string("line\nbreak"))
    }

    @Test func readsTheCapturedPythonLayout() throws {
        let body = """
            --batch_abc
            Content-Type: multipart/mixed; boundary=changeset_def

            --changeset_def
            Content-Type: application/http
            Content-Transfer-Encoding: binary
            Content-ID: 0

            PATCH http://127.0.0.1:10002/devstoreaccount1/mytable(PartitionKey='p',RowKey='r') HTTP/1.1
            Content-Type: application/json
            Accept: application/json;odata=minimalmetadata
            DataServiceVersion: 3.0

            {"PartitionKey": "p", "RowKey": "r", "N": 1}
            --changeset_def--

            --batch_abc--
            """.replacingOccurrences(of: "\n", with: "\r\n")
        let parsed = try BatchRequestParser.parse(Data(body.utf8), contentType: "multipart/mixed; boundary=batch_abc")
        #expect(parsed.count == 1)
        #expect(parsed[0].method == "PATCH")
        #expect(String(decoding: parsed[0].body, as: UTF8.self) == #"{"PartitionKey": "p", "RowKey": "r", "N": 1}"#)
        #expect(parsed[0].headers["DataServiceVersion"] == "3.0")
    }

    @Test func malformedBodiesAreErrors() {
        #expect(throws: BatchSyntaxError.self) { try BatchRequestParser.parse(Data("x".utf8), contentType: "multipart/mixed") }
        #expect(throws: BatchSyntaxError.self) {
            try BatchRequestParser.parse(Data("--b\r\n\r\nnothing\r\n--b--".utf8), contentType: "multipart/mixed; boundary=b")
        }
        #expect(throws: BatchSyntaxError.self) {
            try BatchRequestParser.parse(
                Data(
                    "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nGARBAGE\r\n--c--\r\n--b--"
                        .utf8),
                contentType: "multipart/mixed; boundary=b")
        }
    }
}
