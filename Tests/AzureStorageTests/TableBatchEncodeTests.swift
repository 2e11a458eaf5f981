import AzureStorage
import Foundation
import PropertyBased
import Testing

/// A batch body is written straight into bytes: for any keys (quotes, `%`, slashes, spaces,
/// characters past ASCII) and any operation, the same bytes as written line by line as Strings.
@Suite struct TableBatchEncodeTests {
    /// The body as it was written before: each line a String, each URL `tableURL` + ``TableClient/entityPath(_:_:)``.
    static func reference(_ operations: [TableBatchOperation], tableURL: String, boundary: String, changeset: String) -> [UInt8] {
        var out = "--batch_\(boundary)\r\nContent-Type: multipart/mixed; boundary=changeset_\(changeset)\r\n\r\n"
        for (index, op) in operations.enumerated() {
            out += "--changeset_\(changeset)\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: \(index)\r\n\r\n"
            let url = tableURL + TableClient.entityPath(op.partitionKey, op.rowKey)
            var json: [UInt8] = []
            switch op {
            case .insert(let e):
                out += "POST \(tableURL) HTTP/1.1\r\nPrefer: return-no-content\r\n"
                EntityJSONEncoder.append(e, to: &json)
            case .upsertReplace(let e):
                out += "PUT \(url) HTTP/1.1\r\n"
                EntityJSONEncoder.append(e, to: &json)
            case .upsertMerge(let e):
                out += "MERGE \(url) HTTP/1.1\r\n"
                EntityJSONEncoder.append(e, to: &json)
            case .update(let e, let etag):
                out += "PUT \(url) HTTP/1.1\r\nIf-Match: \(etag)\r\n"
                EntityJSONEncoder.append(e, to: &json)
            case .merge(let e, let etag):
                out += "MERGE \(url) HTTP/1.1\r\nIf-Match: \(etag)\r\n"
                EntityJSONEncoder.append(e, to: &json)
            case .delete(_, _, let etag):
                out += "DELETE \(url) HTTP/1.1\r\nIf-Match: \(etag)\r\n"
            }
            out += "Accept: application/json;odata=minimalmetadata\r\nDataServiceVersion: 3.0\r\n"
            if !json.isEmpty { out += "Content-Type: application/json\r\nContent-Length: \(json.count)\r\n" }
            out += "\r\n" + String(decoding: json, as: UTF8.self) + "\r\n"
        }
        out += "--changeset_\(changeset)--\r\n\r\n--batch_\(boundary)--\r\n"
        return Array(out.utf8)
    }

    @Test func theBodyIsTheOneWrittenLineByLine() async {
        let pieces = ["a", "'", "''", "%", "/", " ", "é", "😀", "~", "-", "+", "?", "#", "(", ")", ",", "="]
        let key = Gen.element(of: pieces).map { $0 ?? "" }.array(of: 0...6).map { $0.joined() }
        let kind = Gen.int(in: 0...5)
        await propertyCheck(input: key, key.array(of: 1...4), kind.array(of: 4)) { partition, rows, kinds in
            let operations: [TableBatchOperation] = zip(rows, kinds).enumerated().map { i, pair in
                let (row, kind) = pair
                let entity = TableEntity(partitionKey: partition, rowKey: row + "\(i)", properties: ["N": .int32(Int32(i)), "S": .string(row)])
                let etag = "W/\"datetime'2026-01-01T00%3A00%3A0\(i).0000000Z'\""
                switch kind {
                case 0: return .insert(entity)
                case 1: return .upsertReplace(entity)
                case 2: return .upsertMerge(entity)
                case 3: return .update(entity, etag: etag)
                case 4: return .merge(entity, etag: etag)
                default: return .delete(partitionKey: partition, rowKey: row + "\(i)", etag: etag)
                }
            }
            let url = "http://127.0.0.1:10002/devstoreaccount1/events"
            let (body, _) = TableBatchCodec.encode(operations, tableURL: url, boundary: "b", changeset: "c")
            #expect(Array(body) == Self.reference(operations, tableURL: url, boundary: "b", changeset: "c"))
        }
    }
}
