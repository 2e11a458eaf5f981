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

    /// Headers are read when asked (two of each part are): what `header(_:)` finds is what the
    /// whole fields hold — the last line of a name, any case, trimmed — and a header line with
    /// no colon, or a part of more than 100 header lines, is still refused at once.
    @Test func headersReadWhenAskedAreTheFieldsAndBadLinesAreStillRefused() throws {
        func batch(_ headerLines: String) -> Data {
            let part = "PUT http://h/devstoreaccount1/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\n\(headerLines)\r\n{}\r\n"
            return Data(
                ("--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\n\(part)--c--\r\n--b--")
                    .utf8)
        }
        let parsed = try BatchRequestParser.parse(
            batch("if-match: W/\"1\"\r\nPrefer:  return-no-content \t\r\nIF-MATCH:\tW/\"2\"\r\nX-Empty:\r\n"),
            contentType: "multipart/mixed; boundary=b")[0]
        for name in ["If-Match", "if-match", "Prefer", "X-Empty", "Content-Type", "Accept"] {
            #expect(parsed.header(name) == parsed.headers[name], "\(name)")
        }
        #expect(parsed.header("If-Match") == "W/\"2\"" && parsed.header("prefer") == "return-no-content" && parsed.header("X-Empty") == "")
        #expect(String(decoding: parsed.body, as: UTF8.self) == "{}")
        for bad in ["If-Match W/\"1\"\r\n", "A: 1\r\nno colon here\r\n", String(repeating: "A: 1\r\n", count: 101)] {
            #expect(throws: BatchSyntaxError.self, "\(bad.prefix(20))") {
                try BatchRequestParser.parse(batch(bad), contentType: "multipart/mixed; boundary=b")
            }
        }
        _ = try BatchRequestParser.parse(batch(String(repeating: "A: 1\r\n", count: 100)), contentType: "multipart/mixed; boundary=b")
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
