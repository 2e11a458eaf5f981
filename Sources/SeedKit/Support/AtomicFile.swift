import Foundation

/// Files written whole or not at all: the bytes go to a temporary file beside the
/// destination, which is then renamed over it. A reader (a script waiting for a ready file,
/// `apply --plan`) never sees half a file.
public enum AtomicFile {
    /// Writes what `body` hands to its writer into `file`. Blocking: call it on a dedicated
    /// thread (`BlockingPool`), not the cooperative pool. Throws the underlying error; the
    /// temporary file is removed on failure.
    public static func write(_ file: URL, _ body: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws {
        // Named apart from the destination's name, so a destination name near NAME_MAX works.
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".azseed-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).partial")
        do {
            let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
            guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            try body { try handle.write(contentsOf: $0) }
            try handle.close()
            guard rename(temporary.path, file.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }
}
