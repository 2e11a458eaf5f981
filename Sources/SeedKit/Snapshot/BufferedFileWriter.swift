import Crypto
import Foundation

/// Appends bytes to a file through a 1 MiB buffer, hashing them with SHA-256 on the way.
final class BufferedFileWriter {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var hasher = SHA256()
    private(set) var bytesWritten = 0

    init(url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw GenerationError("cannot create \(url.path)")
        }
        handle = try FileHandle(forWritingTo: url)
        buffer.reserveCapacity(1 << 20)
    }

    func write(_ body: (inout [UInt8]) -> Void) throws {
        body(&buffer)
        if buffer.count >= 1 << 20 { try flush() }
    }

    private func flush() throws {
        hasher.update(data: buffer)
        bytesWritten += buffer.count
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, closes, and returns the hex SHA-256 of everything written.
    func finish() throws -> String {
        try flush()
        try handle.close()
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
