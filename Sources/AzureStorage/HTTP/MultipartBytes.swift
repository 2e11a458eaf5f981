import Foundation

/// Byte-level pieces of `multipart/mixed` bodies (entity group transactions), shared by the
/// client (reading responses) and the emulator (reading requests). Bytes, not `String`
/// searches: Foundation's string search was most of a batch's cost.
package enum MultipartBytes {
    static let newline = UInt8(ascii: "\n")

    /// CRLF → LF, so both line endings read the same.
    package static func withoutCarriageReturns(_ data: Data) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count)
        var previousCR = false
        let bytes = [UInt8](data)
        for b in bytes {
            if previousCR && b != newline { out.append(UInt8(ascii: "\r")) }
            previousCR = b == UInt8(ascii: "\r")
            if !previousCR { out.append(b) }
        }
        if previousCR { out.append(UInt8(ascii: "\r")) }
        return out
    }

    /// The first index of `needle` in `hay` at or after `from`.
    package static func find(_ needle: [UInt8], in hay: ArraySlice<UInt8>, from: Int) -> Int? {
        guard !needle.isEmpty, hay.endIndex - from >= needle.count else { return nil }
        let first = needle[0]
        var i = from
        let last = hay.endIndex - needle.count
        while i <= last {
            if hay[i] == first {
                var j = 1
                while j < needle.count && hay[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
            }
            i += 1
        }
        return nil
    }

    /// The first `delimiter` at or after `from` that starts a line: the boundary string may
    /// appear inside a part (a property value holding it), where it ends nothing.
    static func findDelimiter(_ delimiter: [UInt8], in bytes: ArraySlice<UInt8>, from: Int) -> Int? {
        var from = from
        while let found = find(delimiter, in: bytes, from: from) {
            if found == bytes.startIndex || bytes[found - 1] == newline { return found }
            from = found + 1
        }
        return nil
    }

    /// The parts between `--boundary` delimiters (each at a line start), up to `--boundary--`.
    package static func parts(of bytes: ArraySlice<UInt8>, boundary: String) -> [ArraySlice<UInt8>] {
        let delimiter = Array(("--" + boundary).utf8)
        var out: [ArraySlice<UInt8>] = []
        guard var start = findDelimiter(delimiter, in: bytes, from: bytes.startIndex) else { return out }
        while true {
            var partStart = start + delimiter.count
            if partStart + 1 < bytes.endIndex, bytes[partStart] == UInt8(ascii: "-"), bytes[partStart + 1] == UInt8(ascii: "-") { break }
            if partStart < bytes.endIndex, bytes[partStart] == newline { partStart += 1 }
            guard let next = findDelimiter(delimiter, in: bytes, from: partStart) else {
                out.append(bytes[partStart...])
                break
            }
            out.append(bytes[partStart..<next])
            start = next
        }
        return out
    }

    /// The bytes up to the first blank line, and the rest after it.
    package static func headerBlock(_ bytes: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, ArraySlice<UInt8>) {
        guard let blank = find([newline, newline], in: bytes, from: bytes.startIndex) else { return (bytes, bytes[bytes.endIndex...]) }
        return (bytes[..<blank], bytes[(blank + 2)...])
    }

    /// The `boundary` parameter of a multipart Content-Type, unquoted; nil when absent or empty.
    package static func boundary(in contentType: String) -> String? {
        guard let r = contentType.range(of: "boundary=") else { return nil }
        var value = String(contentType[r.upperBound...].prefix { $0 != ";" && !$0.isWhitespace })
        if value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 { value = String(value.dropFirst().dropLast()) }
        return value.isEmpty ? nil : value
    }

    /// An HTTP message carried in an `application/http` part: what a `$batch` request or
    /// response holds for each operation.
    package struct HTTPMessage {
        /// The part's own header fields (`Content-Type: application/http`, `Content-ID`).
        package var partHeaders: HeaderFields
        /// `POST http://… HTTP/1.1` or `HTTP/1.1 204 No Content`; nil for an empty part.
        package var startLine: String?
        package var headers: HeaderFields
        /// The first header line without a colon, if any: a request parser refuses it.
        package var malformedLine: String?
        package var payload: ArraySlice<UInt8>
    }

    /// The HTTP message inside a part, after the part's own header block.
    package static func httpMessage(in part: ArraySlice<UInt8>) -> HTTPMessage {
        let (outer, http) = headerBlock(part)
        let (head, payload) = headerBlock(http)
        var malformed: String?
        let partHeaders = fields(outer.split(separator: newline).map { String(decoding: $0, as: UTF8.self) }[...], malformed: &malformed)
        malformed = nil
        let lines = head.split(separator: newline).map { String(decoding: $0, as: UTF8.self) }
        let headers = fields(lines.dropFirst(), malformed: &malformed)
        return HTTPMessage(partHeaders: partHeaders, startLine: lines.first, headers: headers, malformedLine: malformed, payload: payload)
    }

    /// `Name: value` lines as header fields; the first line without a colon goes to `malformed`.
    private static func fields(_ lines: ArraySlice<String>, malformed: inout String?) -> HeaderFields {
        var headers = HeaderFields()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                malformed = malformed ?? line
                continue
            }
            headers[HeaderFields.trimmed(line[..<colon])] = HeaderFields.trimmed(line[line.index(after: colon)...])
        }
        return headers
    }
}
