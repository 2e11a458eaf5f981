import Foundation

/// Reads a file line by line (LF-separated) through a 1 MiB buffer, hashing every byte
/// with `onBytes`, so a million-line table file never sits in memory whole.
struct LineReader {
    let url: URL
    static let maxLine = 8 << 20

    /// Calls `body` with each line's bytes (without the newline) and its 1-based number.
    func forEachLine(onBytes: ((UnsafeRawBufferPointer) -> Void)? = nil, _ body: ([UInt8], Int) throws -> Void) throws {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var pending: [UInt8] = []
        var number = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            chunk.withUnsafeBytes { onBytes?($0) }
            // Only the new bytes are searched: a long line costs its length once, not again
            // with every chunk (a 300 MB line ran for minutes).
            var searchFrom = pending.count
            pending.append(contentsOf: chunk)
            var start = 0
            while let end = pending[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
                number += 1
                try body(Array(pending[start..<end]), number)
                start = end + 1
                searchFrom = start
            }
            pending.removeFirst(start)
            // No line azseed reads is longer: an entity is at most 1 MiB as Azure counts it,
            // which JSON's escapes can make six times as long.
            guard pending.count <= Self.maxLine else { throw LineTooLong(line: number + 1, limit: Self.maxLine) }
        }
        if !pending.isEmpty {
            number += 1
            try body(pending, number)
        }
    }
}

/// A line past ``LineReader/maxLine`` bytes.
struct LineTooLong: Error, CustomStringConvertible {
    let line: Int
    let limit: Int
    var description: String { "line \(line) is longer than \(limit >> 20) MiB, more than any entity's JSON" }
}
