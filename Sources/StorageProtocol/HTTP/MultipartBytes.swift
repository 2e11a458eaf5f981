import CLinux
import Foundation

/// Byte-level pieces of `multipart/mixed` bodies (entity group transactions), shared by the
/// client (reading responses) and the emulator (reading requests). Bytes, not `String`
/// searches: Foundation's string search was most of a batch's cost.
public enum MultipartBytes {
    static let newline = UInt8(ascii: "\n")

    /// CRLF → LF, so both line endings read the same. Written into storage sized once: it
    /// runs over every byte of a batch, both ways.
    public static func withoutCarriageReturns(_ data: Data) -> [UInt8] {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            return [UInt8](unsafeUninitializedCapacity: bytes.count) { out, count in
                guard let base = bytes.baseAddress, let target = out.baseAddress else {
                    count = 0
                    return
                }
                // Runs between CRs are copied whole (a byte at a time, this was a thirtieth
                // of the emulator's batch inserts).
                var n = 0
                var i = 0
                while i < bytes.count {
                    let rest = bytes.count - i
                    let found = memchr(base + i, Int32(UInt8(ascii: "\r")), rest)
                    let run = found.map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - (base + i) } ?? rest
                    (target + n).initialize(from: base + i, count: run)
                    n += run
                    i += run
                    guard i < bytes.count else { break }
                    // A CR is dropped only when an LF follows it.
                    if i + 1 == bytes.count || bytes[i + 1] != newline {
                        target[n] = bytes[i]
                        n += 1
                    }
                    i += 1
                }
                count = n
            }
        }
    }

    /// The first index of `needle` in `hay` at or after `from` (libc's `memmem`: a byte-by-byte
    /// search for the boundary was the emulator's largest single cost in a batch).
    public static func find(_ needle: [UInt8], in hay: ArraySlice<UInt8>, from: Int) -> Int? {
        guard !needle.isEmpty, from >= hay.startIndex, hay.endIndex - from >= needle.count else { return nil }
        return hay.withUnsafeBufferPointer { buffer in
            needle.withUnsafeBufferPointer { pattern in
                let start = buffer.baseAddress! + (from - hay.startIndex)
                guard let found = azs_memmem(start, hay.endIndex - from, pattern.baseAddress!, pattern.count) else { return nil }
                return from + (UnsafeRawPointer(found) - UnsafeRawPointer(start))
            }
        }
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
    public static func parts(of bytes: ArraySlice<UInt8>, boundary: String) -> [ArraySlice<UInt8>] {
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
    public static func headerBlock(_ bytes: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, ArraySlice<UInt8>) {
        guard let blank = find([newline, newline], in: bytes, from: bytes.startIndex) else { return (bytes, bytes[bytes.endIndex...]) }
        return (bytes[..<blank], bytes[(blank + 2)...])
    }

    /// The `boundary` parameter of a multipart Content-Type, unquoted; nil when absent or empty.
    public static func boundary(in contentType: String) -> String? {
        guard let r = contentType.range(of: "boundary=") else { return nil }
        var value = String(contentType[r.upperBound...].prefix { $0 != ";" && !$0.isWhitespace })
        if value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 { value = String(value.dropFirst().dropLast()) }
        return value.isEmpty ? nil : value
    }

    /// An HTTP message carried in an `application/http` part: what a `$batch` request or
    /// response holds for each operation.
    public struct HTTPMessage {
        /// The part's own header fields (`Content-Type: application/http`, `Content-ID`).
        public var partHeaders: HeaderFields
        /// `POST http://… HTTP/1.1` or `HTTP/1.1 204 No Content`; nil for an empty part.
        public var startLine: String?
        public var headers: HeaderFields
        /// The first header line without a colon, if any: a request parser refuses it.
        public var malformedLine: String?
        public var payload: ArraySlice<UInt8>
    }

    /// The HTTP message inside a part, after the part's own header block. Read as bytes: a
    /// String per line searched Character by Character was a tenth of a batch on either side.
    public static func httpMessage(in part: ArraySlice<UInt8>) -> HTTPMessage {
        let (outer, http) = headerBlock(part)
        let (block, payload) = headerBlock(http)
        let head = block.drop { $0 == newline }  // blank lines before the start line are skipped
        var malformed: String?
        let partHeaders = fields(outer, malformed: &malformed)
        malformed = nil
        let lineEnd = head.firstIndex(of: newline) ?? head.endIndex
        let startLine = head.isEmpty ? nil : String(decoding: head[..<lineEnd], as: UTF8.self)
        let headers = fields(head[min(lineEnd + 1, head.endIndex)...], malformed: &malformed)
        return HTTPMessage(partHeaders: partHeaders, startLine: startLine, headers: headers, malformedLine: malformed, payload: payload)
    }

    /// The start line of the HTTP message inside a part, its header lines unread and its
    /// payload: what a batch answer needs for a success (its status and one header, read with
    /// ``field(_:in:)``), without a String per header of every part.
    public static func httpHead(in part: ArraySlice<UInt8>) -> (startLine: String?, headers: ArraySlice<UInt8>, payload: ArraySlice<UInt8>) {
        let (_, http) = headerBlock(part)
        let (block, payload) = headerBlock(http)
        let head = block.drop { $0 == newline }
        let lineEnd = head.firstIndex(of: newline) ?? head.endIndex
        let startLine = head.isEmpty ? nil : String(decoding: head[..<lineEnd], as: UTF8.self)
        return (startLine, head[min(lineEnd + 1, head.endIndex)...], payload)
    }

    /// The value of the last header line named `name` (ASCII, any case) in a header block,
    /// trimmed; nil when there is none: what ``httpMessage(in:)``'s fields hold for it (a later
    /// line replaces an earlier one; at most ``maxHeaderLines`` lines are read).
    public static func field(_ name: String, in block: ArraySlice<UInt8>) -> String? {
        let wanted = Array(name.utf8)
        var found: String?
        var start = block.startIndex
        var lines = 0
        while start < block.endIndex, lines < maxHeaderLines {
            lines += 1
            let end = block[start...].firstIndex(of: newline) ?? block.endIndex
            defer { start = end + 1 }
            let line = block[start..<end]
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            var nameBytes = line[..<colon]
            while let last = nameBytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { nameBytes = nameBytes.dropLast() }
            while let first = nameBytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { nameBytes = nameBytes.dropFirst() }
            guard nameBytes.count == wanted.count,
                zip(nameBytes, wanted).allSatisfy({ a, b in a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A) })
            else { continue }
            found = trimmed(line[(colon + 1)...])
        }
        return found
    }

    /// The header fields of a header block, as ``httpMessage(in:)`` reads them.
    public static func headerFields(_ block: ArraySlice<UInt8>) -> HeaderFields {
        var malformed: String?
        return fields(block, malformed: &malformed)
    }

    /// What ``httpMessage(in:)`` reports as its `malformedLine` for a header block, found
    /// without a String per header: the first line with no colon, or the line past
    /// ``maxHeaderLines``.
    public static func malformedLine(in block: ArraySlice<UInt8>) -> String? {
        var start = block.startIndex
        var lines = 0
        while start < block.endIndex {
            lines += 1
            if lines > maxHeaderLines { return "more than \(maxHeaderLines) header lines" }
            let end = block[start...].firstIndex(of: newline) ?? block.endIndex
            defer { start = end + 1 }
            let line = block[start..<end]
            if !line.isEmpty, !line.contains(UInt8(ascii: ":")) { return String(decoding: line, as: UTF8.self) }
        }
        return nil
    }

    /// The most header lines one part may hold: a part is a handful of headers, and each one
    /// set replaces any of its name (a scan of those before), so a part of 30,000 lines once
    /// held the emulator for seconds before the request was even authorised.
    static let maxHeaderLines = 100

    /// `Name: value` lines as header fields; the first line without a colon goes to `malformed`,
    /// as does the line past ``maxHeaderLines`` (and reading stops there).
    private static func fields(_ block: ArraySlice<UInt8>, malformed: inout String?) -> HeaderFields {
        var headers = HeaderFields()
        var start = block.startIndex
        var lines = 0
        while start < block.endIndex {
            lines += 1
            if lines > maxHeaderLines {
                malformed = malformed ?? "more than \(maxHeaderLines) header lines"
                break
            }
            let end = block[start...].firstIndex(of: newline) ?? block.endIndex
            defer { start = end + 1 }
            let line = block[start..<end]
            if line.isEmpty { continue }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                malformed = malformed ?? String(decoding: line, as: UTF8.self)
                continue
            }
            headers[trimmed(line[..<colon])] = trimmed(line[(colon + 1)...])
        }
        return headers
    }

    /// The bytes without the spaces and tabs around them, as a String.
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> String {
        let isBlank = { (b: UInt8) in b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
