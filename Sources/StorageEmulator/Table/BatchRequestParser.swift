import Foundation
import StorageProtocol

/// One request inside a `$batch` changeset.
struct BatchInnerRequest: Sendable, Equatable {
    var method: String
    /// The absolute URL of the request line.
    var url: String
    /// The header lines, read when asked: a batch of 100 needs two headers of each, and a
    /// String per header of every part was a twentieth of the emulator's time in a migration.
    var headerBlock: ArraySlice<UInt8>
    var body: ArraySlice<UInt8>

    /// Every header field (the last line of a name counts, as ``header(_:)``).
    var headers: HeaderFields { MultipartBytes.headerFields(headerBlock) }

    /// The value of the last header line named `name` (any case), trimmed.
    func header(_ name: String) -> String? { MultipartBytes.field(name, in: headerBlock) }
}

/// Why a `$batch` body could not be read.
struct BatchSyntaxError: Error, Sendable, CustomStringConvertible {
    var reason: String
    var description: String { "malformed batch request: \(reason)" }
}

/// Reads the multipart body of an entity group transaction (docs/PROTOCOL.md §5): one changeset
/// of `application/http` parts, each a request line, headers and an optional JSON body.
/// Accepts CRLF and bare LF line endings.
enum BatchRequestParser {
    /// Works on bytes: a batch of 100 entities is parsed in well under a millisecond, where
    /// Foundation's string searching took most of the emulator's time.
    static func parse(_ body: Data, contentType: String) throws(BatchSyntaxError) -> [BatchInnerRequest] {
        guard let outer = MultipartBytes.boundary(in: contentType) else { throw BatchSyntaxError(reason: "the Content-Type has no boundary") }
        let bytes = MultipartBytes.withoutCarriageReturns(body)
        let batchParts = MultipartBytes.parts(of: bytes[...], boundary: outer)
        let changesets = batchParts.filter {
            String(decoding: MultipartBytes.headerBlock($0).0, as: UTF8.self).lowercased().contains("multipart/mixed")
        }
        guard let changesetPart = changesets.first else { throw BatchSyntaxError(reason: "no changeset") }
        // An entity group transaction is one changeset; a second one is never dropped silently.
        guard changesets.count == 1 else {
            throw BatchSyntaxError(reason: "the batch holds \(changesets.count) changesets; an entity group transaction holds exactly one")
        }
        let (changesetHead, changesetBody) = MultipartBytes.headerBlock(changesetPart)
        let changesetHeaders = lines(changesetHead)
        guard let contentTypeLine = changesetHeaders.first(where: { $0.lowercased().hasPrefix("content-type:") }),
            let inner = MultipartBytes.boundary(in: contentTypeLine)
        else { throw BatchSyntaxError(reason: "the changeset has no boundary") }
        var requests: [BatchInnerRequest] = []
        for part in MultipartBytes.parts(of: changesetBody, boundary: inner) {
            let message = MultipartBytes.httpHead(in: part)
            guard let requestLine = message.startLine else { throw BatchSyntaxError(reason: "a part has no request line") }
            // Split as bytes: Character by Character, this split was a tenth of the emulator's time.
            let fields = requestLine.utf8.split(separator: UInt8(ascii: " "), maxSplits: 2).map { String(decoding: $0, as: UTF8.self) }
            guard fields.count == 3, fields[2].hasPrefix("HTTP/") else {
                throw BatchSyntaxError(reason: "bad request line '\(requestLine.prefix(80))'")
            }
            if let line = MultipartBytes.malformedLine(in: message.headers) { throw BatchSyntaxError(reason: "bad header line '\(line.prefix(80))'") }
            let payload = message.payload
            let trimmed = payload.last == UInt8(ascii: "\n") ? payload.dropLast() : payload
            requests.append(BatchInnerRequest(method: fields[0], url: fields[1], headerBlock: message.headers, body: trimmed))
        }
        if requests.isEmpty { throw BatchSyntaxError(reason: "the changeset holds no request") }
        return requests
    }

    private static func lines(_ bytes: ArraySlice<UInt8>) -> [String] {
        bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
    }
}
