import Crypto
import Foundation

/// A file read front to back in chunks — by one task at a time, on `BlockingPool`'s threads
/// (the calls block on the disk).
package final class FileChunks: @unchecked Sendable {
    private let handle: FileHandle

    init(_ file: URL) throws { handle = try FileHandle(forReadingFrom: file) }

    /// The next chunk of at most `size` bytes; nil at the end.
    func next(_ size: Int) throws -> Data? {
        guard let chunk = try handle.read(upToCount: size), !chunk.isEmpty else { return nil }
        return chunk
    }

    func close() { try? handle.close() }
}

extension FileChunks {
    /// The MD5 of a file's bytes, read in 4 MiB chunks. Blocks on the disk: call it on
    /// `BlockingPool`'s threads.
    package static func md5(of file: URL) throws -> [UInt8] {
        let chunks = try FileChunks(file)
        defer { chunks.close() }
        var md5 = Insecure.MD5()
        while let chunk = try chunks.next(4 << 20) { md5.update(data: chunk) }
        return Array(md5.finalize())
    }
}
