import Foundation

/// CSV as Query Blob Contents reads and writes it (`DelimitedTextConfiguration`): a column
/// separator, a field quote, a record separator and an escape character, each given by the
/// request; fields are kept as bytes, never re-encoded.
struct DelimitedText: Equatable, Sendable {
    var columnSeparator: [UInt8] = Array(",".utf8)
    var fieldQuote: [UInt8] = Array("\"".utf8)
    var recordSeparator: [UInt8] = Array("\n".utf8)
    var escapeChar: [UInt8] = []
    var hasHeaders = false

    /// The outcome of looking for the next record at a position.
    enum Scan: Equatable {
        /// The record's fields and where the next one starts.
        case record([[UInt8]], next: Int)
        /// The bytes end before the record does: more are needed.
        case incomplete
    }

    /// Reads the record starting at `start`. `atEnd`: no bytes follow `bytes`, so what is left
    /// is the last record. A record separator of `\n` also takes a `\r` before it (CRLF files).
    func scan(_ bytes: [UInt8], from start: Int, atEnd: Bool) -> Scan {
        var fields: [[UInt8]] = []
        var field: [UInt8] = []
        var inQuotes = false
        var fieldStart = true
        var quotedField = false
        /// How long the field was when its closing quote was read.
        var closedAt = 0
        var i = start
        let longest = max(columnSeparator.count, fieldQuote.count * 2, recordSeparator.count, escapeChar.count + 1)
        func matches(_ token: [UInt8], at p: Int) -> Bool {
            !token.isEmpty && p + token.count <= bytes.count && bytes[p..<(p + token.count)].elementsEqual(token)
        }
        while true {
            if i >= bytes.count {
                guard atEnd else { return .incomplete }
                fields.append(field)
                return .record(fields, next: bytes.count)
            }
            // Near the end, a separator could be cut in two: wait for the rest.
            if !atEnd && i + longest > bytes.count { return .incomplete }
            if matches(escapeChar, at: i), i + escapeChar.count < bytes.count {
                field.append(bytes[i + escapeChar.count])
                i += escapeChar.count + 1
                fieldStart = false
                continue
            }
            if inQuotes {
                if matches(fieldQuote, at: i) {
                    if matches(fieldQuote, at: i + fieldQuote.count) {
                        field.append(contentsOf: fieldQuote)
                        i += fieldQuote.count * 2
                    } else {
                        inQuotes = false
                        closedAt = field.count
                        i += fieldQuote.count
                    }
                } else {
                    field.append(bytes[i])
                    i += 1
                }
                continue
            }
            if fieldStart, matches(fieldQuote, at: i) {
                inQuotes = true
                quotedField = true
                fieldStart = false
                i += fieldQuote.count
            } else if matches(columnSeparator, at: i) {
                fields.append(field)
                field = []
                fieldStart = true
                quotedField = false
                i += columnSeparator.count
            } else if matches(recordSeparator, at: i) {
                if recordSeparator == [0x0A], !quotedField || field.count > closedAt, field.last == 0x0D { field.removeLast() }
                fields.append(field)
                return .record(fields, next: i + recordSeparator.count)
            } else {
                field.append(bytes[i])
                fieldStart = false
                i += 1
            }
        }
    }

    /// One record in this format, its separator after it. A field holding a separator, the
    /// quote (or a `\r` before a `\n` separator) is quoted; a quote inside is escaped (or
    /// doubled when there is no escape), and so is the escape character itself. Without a
    /// quote, separators are escaped. What ``scan(_:from:atEnd:)`` reads back is the fields.
    func write(_ fields: [[UInt8]], into out: inout Data) {
        for (n, field) in fields.enumerated() {
            if n > 0 { out.append(contentsOf: columnSeparator) }
            let special =
                Self.contains(field, columnSeparator) || Self.contains(field, recordSeparator) || Self.contains(field, fieldQuote)
                || (recordSeparator == [0x0A] && field.contains(0x0D))
            let quoted = special && !fieldQuote.isEmpty
            if quoted { out.append(contentsOf: fieldQuote) }
            var i = 0
            while i < field.count {
                if Self.startsWith(field, escapeChar, at: i) {
                    out.append(contentsOf: escapeChar)
                    out.append(contentsOf: escapeChar)
                    i += escapeChar.count
                } else if quoted, Self.startsWith(field, fieldQuote, at: i) {
                    out.append(contentsOf: escapeChar.isEmpty ? fieldQuote : escapeChar)
                    out.append(contentsOf: fieldQuote)
                    i += fieldQuote.count
                } else if !quoted, !escapeChar.isEmpty,
                    Self.startsWith(field, columnSeparator, at: i) || Self.startsWith(field, recordSeparator, at: i)
                        || Self.startsWith(field, fieldQuote, at: i)
                {
                    out.append(contentsOf: escapeChar)
                    out.append(field[i])
                    i += 1
                } else {
                    out.append(field[i])
                    i += 1
                }
            }
            if quoted { out.append(contentsOf: fieldQuote) }
        }
        out.append(contentsOf: recordSeparator)
    }

    private static func startsWith(_ bytes: [UInt8], _ token: [UInt8], at p: Int) -> Bool {
        !token.isEmpty && p + token.count <= bytes.count && bytes[p..<(p + token.count)].elementsEqual(token)
    }

    private static func contains(_ bytes: [UInt8], _ token: [UInt8]) -> Bool {
        guard !token.isEmpty, bytes.count >= token.count else { return false }
        for p in 0...(bytes.count - token.count) where startsWith(bytes, token, at: p) { return true }
        return false
    }
}
