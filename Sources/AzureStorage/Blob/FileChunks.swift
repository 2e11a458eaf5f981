import Foundation

/// A file read front to back in chunks — by one task at a time, on `BlockingPool`'s threads
/// (the calls block on the disk).
final class FileChunks: @unchecked Sendable {
    private let handle: FileHandle

    init(_ file: URL) throws { handle = try FileHandle(forReadingFrom: file) }

    /// The next chunk of at most `size` bytes; nil at the end.
    func next(_ size: Int) throws -> Data? {
        guard let chunk = try handle.read(upToCount: size), !chunk.isEmpty else { return nil }
        return chunk
    }

    func close() { try? handle.close() }
}
