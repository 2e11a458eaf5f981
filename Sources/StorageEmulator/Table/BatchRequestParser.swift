import AzureStorage
import Foundation

/// One request inside a `$batch` changeset.
struct BatchInnerRequest: Sendable, Equatable {
    var method: String
    /// The absolute URL of the request line.
    var url: String
    var headers: HTTPHeaders
    var body: Data
}

/// Why a `$batch` body could not be read.
struct BatchSyntaxError: Error, Sendable, CustomStringConvertible {
    var reason: String
    var description: String { "malformed batch request: \(reason)" }
}

/// Reads the multipart body of an entity group transaction (fact sheet §5): one changeset
/// of `application/http` parts, each a request line, headers and an optional JSON body.
/// Accepts CRLF and bare LF line endings.
enum BatchRequestParser {
    static func parse(_ body: Data, contentType: String) throws(BatchSyntaxError) -> [BatchInnerRequest] {
        guard let outer = boundary(in: contentType) else { throw BatchSyntaxError(reason: "the Content-Type has no boundary") }
        let text = String(decoding: body, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        let batchParts = parts(of: text, boundary: outer)
        guard let changesetPart = batchParts.first(where: { $0.lowercased().contains("multipart/mixed") }) else {
            throw BatchSyntaxError(reason: "no changeset")
        }
        let (changesetHeaders, changesetBody) = splitHeaders(changesetPart)
        guard let contentTypeLine = changesetHeaders.first(where: { $0.lowercased().hasPrefix("content-type:") }),
              let inner = boundary(in: contentTypeLine)
        else { throw BatchSyntaxError(reason: "the changeset has no boundary") }
        var requests: [BatchInnerRequest] = []
        for part in parts(of: changesetBody, boundary: inner) {
            let (_, http) = splitHeaders(part)
            let (head, payload) = splitHeaders(http)
            guard let requestLine = head.first else { throw BatchSyntaxError(reason: "a part has no request line") }
            let fields = requestLine.split(separator: " ", maxSplits: 2).map(String.init)
            guard fields.count == 3, fields[2].hasPrefix("HTTP/") else { throw BatchSyntaxError(reason: "bad request line '\(requestLine.prefix(80))'") }
            var headers = HTTPHeaders()
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { throw BatchSyntaxError(reason: "bad header line '\(line.prefix(80))'") }
                headers[String(line[..<colon]).trimmingCharacters(in: .whitespaces)] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            }
            let trimmed = payload.hasSuffix("\n") ? String(payload.dropLast()) : payload
            requests.append(BatchInnerRequest(method: fields[0], url: fields[1], headers: headers, body: Data(trimmed.utf8)))
        }
        if requests.isEmpty { throw BatchSyntaxError(reason: "the changeset holds no request") }
        return requests
    }

    static func boundary(in contentType: String) -> String? {
        guard let r = contentType.range(of: "boundary=") else { return nil }
        var value = String(contentType[r.upperBound...].prefix { $0 != ";" && !$0.isWhitespace })
        if value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 { value = String(value.dropFirst().dropLast()) }
        return value.isEmpty ? nil : value
    }

    /// The parts between `--boundary` delimiters, up to `--boundary--`.
    private static func parts(of text: String, boundary: String) -> [String] {
        var out: [String] = []
        let delimiter = "--" + boundary
        var chunks = text.components(separatedBy: delimiter)
        chunks.removeFirst()
        for chunk in chunks {
            if chunk.hasPrefix("--") { break }
            out.append(chunk.hasPrefix("\n") ? String(chunk.dropFirst()) : chunk)
        }
        return out
    }

    /// Header lines up to the first blank line, and the rest.
    private static func splitHeaders(_ text: String) -> ([String], String) {
        guard let blank = text.range(of: "\n\n") else {
            return (text.split(separator: "\n").map(String.init), "")
        }
        let head = text[..<blank.lowerBound].split(separator: "\n").map(String.init)
        return (head, String(text[blank.upperBound...]))
    }
}
