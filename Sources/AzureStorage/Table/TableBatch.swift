import Foundation

/// One operation of an entity group transaction.
public enum TableBatchOperation: Sendable {
    case insert(TableEntity)
    case upsertReplace(TableEntity)
    case upsertMerge(TableEntity)
    case update(TableEntity, etag: String)
    case merge(TableEntity, etag: String)
    case delete(partitionKey: String, rowKey: String, etag: String)

    public var partitionKey: String {
        switch self {
        case .insert(let e), .upsertReplace(let e), .upsertMerge(let e), .update(let e, _), .merge(let e, _): e.partitionKey
        case .delete(let pk, _, _): pk
        }
    }

    public var rowKey: String {
        switch self {
        case .insert(let e), .upsertReplace(let e), .upsertMerge(let e), .update(let e, _), .merge(let e, _): e.rowKey
        case .delete(_, let rk, _): rk
        }
    }
}

/// Builds and parses `$batch` bodies (docs/PROTOCOL.md §5).
package enum TableBatchCodec {
    package static let maxOperations = 100
    package static let maxBodyBytes = 4 * 1024 * 1024

    /// Checks the service's rules before anything is sent; returns the problem or nil.
    package static func problem(_ operations: [TableBatchOperation]) -> String? {
        if operations.isEmpty { return "a batch needs at least one operation" }
        if operations.count > maxOperations { return "a batch holds at most \(maxOperations) operations, not \(operations.count)" }
        let pk = operations[0].partitionKey
        if let i = operations.firstIndex(where: { !$0.partitionKey.isExactly(pk) }) {
            return "operation \(i) has PartitionKey '\(operations[i].partitionKey)'; every operation of a batch must use '\(pk)'"
        }
        // RowKeys in increasing byte order (as a plan writes them) are distinct: no need to
        // hash each one.
        if zip(operations, operations.dropFirst()).allSatisfy({ $0.rowKey.byteOrder($1.rowKey) < 0 }) { return nil }
        var seen: [ExactString: Int] = [:]  // RowKeys by bytes, as Azure tells them apart
        for (i, op) in operations.enumerated() {
            if let first = seen[ExactString(op.rowKey)] {
                return "operations \(first) and \(i) both change RowKey '\(op.rowKey)'; a batch changes each entity once"
            }
            seen[ExactString(op.rowKey)] = i
        }
        return nil
    }

    /// The multipart body and its Content-Type, for a batch against `tableURL`
    /// (`http://host:port/account/table`, the absolute URL inner requests use). Written as bytes
    /// into one buffer, each entity's JSON straight into it: building Strings and copying them
    /// was a fifth of a seeding run's client time.
    package static func encode(
        _ operations: [TableBatchOperation], tableURL: String, boundary: String = UUID().uuidString.lowercased(),
        changeset: String = UUID().uuidString.lowercased()
    ) -> (body: Data, contentType: String) {
        let batch = "batch_\(boundary)"
        let cs = "changeset_\(changeset)"
        var out: [UInt8] = []
        out.reserveCapacity(operations.count * 1600)
        func add(_ text: String) { out.append(contentsOf: text.utf8) }
        let partStart = Array("--\(cs)\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: ".utf8)
        let accept = Array("Accept: application/json;odata=minimalmetadata\r\nDataServiceVersion: 3.0\r\n".utf8)
        var json: [UInt8] = []
        add("--\(batch)\r\nContent-Type: multipart/mixed; boundary=\(cs)\r\n\r\n")
        let table = Array(tableURL.utf8)
        // Each part written straight into the body: a String per line and per URL was a third
        // of encoding a batch.
        func requestLine(_ method: String, _ op: TableBatchOperation, etag: String?) {
            out += method.utf8
            out += table
            TableClient.appendEntityPath(op.partitionKey, op.rowKey, to: &out)
            out += httpVersion
            if let etag {
                out += ifMatch
                out += etag.utf8
                out += crlf
            }
        }
        for (index, op) in operations.enumerated() {
            out += partStart
            out += String(index).utf8
            out += crlf
            out += crlf
            json.removeAll(keepingCapacity: true)
            switch op {
            case .insert(let e):
                out += "POST ".utf8
                out += table
                out += insertLineEnd
                EntityJSONEncoder.append(e, to: &json)
            case .upsertReplace(let e):
                requestLine("PUT ", op, etag: nil)
                EntityJSONEncoder.append(e, to: &json)
            case .upsertMerge(let e):
                requestLine("MERGE ", op, etag: nil)
                EntityJSONEncoder.append(e, to: &json)
            case .update(let e, let etag):
                requestLine("PUT ", op, etag: etag)
                EntityJSONEncoder.append(e, to: &json)
            case .merge(let e, let etag):
                requestLine("MERGE ", op, etag: etag)
                EntityJSONEncoder.append(e, to: &json)
            case .delete(_, _, let etag):
                requestLine("DELETE ", op, etag: etag)
            }
            out += accept
            if !json.isEmpty {
                out += jsonHeaders
                out += String(json.count).utf8
                out += crlf
            }
            out += crlf
            out += json
            out += crlf
        }
        add("--\(cs)--\r\n\r\n--\(batch)--\r\n")
        return (Data(out), "multipart/mixed; boundary=\(batch)")
    }

    private static let crlf = Array("\r\n".utf8)
    private static let httpVersion = Array(" HTTP/1.1\r\n".utf8)
    private static let ifMatch = Array("If-Match: ".utf8)
    private static let insertLineEnd = Array(" HTTP/1.1\r\nPrefer: return-no-content\r\n".utf8)
    private static let jsonHeaders = Array("Content-Type: application/json\r\nContent-Length: ".utf8)

    /// One inner response of a batch.
    package struct Part: Sendable {
        package var status: Int
        package var headers: HeaderFields
        package var body: Data
    }

    /// The inner responses of a `$batch` answer, in order.
    package static func decodeResponse(_ body: Data, contentType: String?, url: String) throws(AzureStorageError) -> [Part] {
        let bytes = MultipartBytes.withoutCarriageReturns(body)
        // The changeset's boundary is declared inside the batch part; fall back to the outer one.
        var boundary = contentType.flatMap(MultipartBytes.boundary(in:))
        let marker = Array("boundary=changesetresponse_".utf8)
        if let at = MultipartBytes.find(marker, in: bytes[...], from: 0) {
            let start = at + "boundary=".count
            let end = bytes[start...].firstIndex { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: " ") } ?? bytes.endIndex
            boundary = String(decoding: bytes[start..<end], as: UTF8.self)
        }
        guard let boundary else {
            throw AzureStorageError(
                kind: .invalidResponse, operation: "Entity Group Transaction", url: url, message: "the batch response has no multipart boundary")
        }
        var parts: [Part] = []
        for chunk in MultipartBytes.parts(of: bytes[...], boundary: boundary) {
            // A success needs its status and ETag alone: every header of every part read into
            // Strings was a tenth of a migration's client time. A failure is read whole.
            let head = MultipartBytes.httpHead(in: chunk)
            guard let status = head.startLine, status.hasPrefix("HTTP/1.1 ") else { continue }
            let code = Int(status.dropFirst("HTTP/1.1 ".count).prefix(3)) ?? 0
            let headers =
                code >= 400
                ? MultipartBytes.httpMessage(in: chunk).headers
                : HeaderFields(MultipartBytes.field("ETag", in: head.headers).map { [("ETag", $0)] } ?? [])
            var body = head.payload
            while let last = body.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: " ") { body = body.dropLast() }
            parts.append(Part(status: code, headers: headers, body: Data(body)))
        }
        return parts
    }

    /// Turns a failed inner response into an error naming the operation.
    static func failure(_ part: Part, operations: [TableBatchOperation], url: String) -> AzureStorageError {
        var service = AzureStorageError.from(
            TransportResponse(status: part.status, headers: part.headers, body: part.body), operation: "Entity Group Transaction", url: url)
        var message = service.message
        var index: Int?
        if let colon = message.firstIndex(of: ":"), let n = Int(message[..<colon]) {
            index = n
            message = String(message[message.index(after: colon)...])
        }
        message = message.split(whereSeparator: \.isNewline).first.map(String.init) ?? message
        service.message = message
        if let index {
            let op = index < operations.count ? operations[index] : nil
            service.failedOperation = AzureStorageError.BatchOperation(index: index, partitionKey: op?.partitionKey, rowKey: op?.rowKey)
        }
        return service
    }
}
