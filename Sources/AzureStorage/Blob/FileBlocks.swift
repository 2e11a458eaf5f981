import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A file written block by block at given offsets (`pwrite`), from several tasks at once —
/// each call on `BlockingPool`'s threads, since every one blocks on the disk. Written under a
/// temporary name beside the destination and renamed over it by `finish()`, so a failed
/// download never leaves a partial file where the user expects the blob.
final class FileBlocks: @unchecked Sendable {
    private let destination: URL
    private let temporary: URL
    private let fd: Int32

    init(creating file: URL) throws {
        destination = file
        temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).azseed-partial")
        fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: file.path]) }
    }

    /// Writes `data` at `offset` (pwrite: concurrent calls on other offsets do not interfere).
    func write(_ data: Data, at offset: Int) throws {
        try data.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination.path])
                }
                done += n
            }
        }
    }

    /// Closes the file and moves it to its destination.
    func finish() throws {
        close(fd)
        guard rename(temporary.path, destination.path) == 0 else {
            unlink(temporary.path)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination.path])
        }
    }

    /// Closes and removes the partial file.
    func discard() {
        close(fd)
        unlink(temporary.path)
    }
}
