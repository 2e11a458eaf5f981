import Foundation

/// Reads a file line by line (LF-separated) through a 1 MiB buffer, hashing every byte
/// with `onBytes`, so a million-line table file never sits in memory whole.
struct LineReader {
    let url: URL

    /// Calls `body` with each line's bytes (without the newline) and its 1-based number.
    func forEachLine(onBytes: ((UnsafeRawBufferPointer) -> Void)? = nil, _ body: ([UInt8], Int) throws -> Void) throws {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var pending: [UInt8] = []
        var number = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            chunk.withUnsafeBytes { onBytes?($0) }
            pending.append(contentsOf: chunk)
            var start = 0
            while let end = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                number += 1
                try body(Array(pending[start..<end]), number)
                start = end + 1
            }
            pending.removeFirst(start)
        }
        if !pending.isEmpty {
            number += 1
            try body(pending, number)
        }
    }
}
