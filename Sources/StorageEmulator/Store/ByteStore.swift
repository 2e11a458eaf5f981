import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where blob and block bytes live, addressed by an id the store makes up.
///
/// Blob names never become file names: a name is only a key in SQLite, and the bytes sit
/// in a file named by a random id, so no name can reach outside the data directory.
protocol ByteStore: Sendable {
    /// Stores bytes durably (on disk: written and fsynced before returning) and returns their id.
    func put(_ bytes: Data) throws -> String
    /// Concatenates stored pieces (id, offset, length) into a new stored object.
    func concatenate(_ pieces: [(id: String, offset: Int, length: Int)]) throws -> String
    /// `length` bytes from `offset`.
    func read(_ id: String, offset: Int, length: Int) throws -> Data
    func delete(_ id: String)
    /// Ids last modified before `date`, for removing orphans left by a crash between writing
    /// bytes and committing metadata; interrupted temporary files older than `date` go too.
    func orphanCandidates(olderThan date: Date) -> [String]
}

struct ByteStoreError: Error, CustomStringConvertible {
    var description: String
}

/// Bytes in files under `<data-dir>/blobs/<2 hex>/<id>`, each written to a temporary name,
/// fsynced and renamed, so a crash leaves either the whole file or none.
final class FileByteStore: ByteStore {
    let root: URL

    init(root: URL) throws {
        self.root = root
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    private func url(_ id: String) -> URL {
        root.appendingPathComponent(String(id.prefix(2)), isDirectory: true).appendingPathComponent(id)
    }

    private static func newID() -> String { UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "") }

    func put(_ bytes: Data) throws -> String {
        try write { fd in try Self.writeAll(fd, bytes) }
    }

    func concatenate(_ pieces: [(id: String, offset: Int, length: Int)]) throws -> String {
        try write { fd in
            for piece in pieces {
                var done = 0
                while done < piece.length {
                    let n = min(4 << 20, piece.length - done)
                    try Self.writeAll(fd, try read(piece.id, offset: piece.offset + done, length: n))
                    done += n
                }
            }
        }
    }

    private func write(_ body: (Int32) throws -> Void) throws -> String {
        let id = Self.newID()
        let final = url(id)
        let dir = final.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let temp = dir.appendingPathComponent(".\(id).tmp")
        let fd = open(temp.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw ByteStoreError(description: "cannot create \(temp.path): \(String(cString: strerror(errno)))") }
        do {
            try body(fd)
            guard fsync(fd) == 0 else { throw ByteStoreError(description: "fsync failed: \(String(cString: strerror(errno)))") }
            close(fd)
        } catch {
            close(fd)
            unlink(temp.path)
            throw error
        }
        guard rename(temp.path, final.path) == 0 else {
            unlink(temp.path)
            throw ByteStoreError(description: "cannot rename into \(final.path): \(String(cString: strerror(errno)))")
        }
        // The rename is durable only once the directory entry is.
        let dfd = open(dir.path, O_RDONLY)
        if dfd >= 0 { _ = fsync(dfd); close(dfd) }
        return id
    }

    private static func writeAll(_ fd: Int32, _ data: Data) throws {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ByteStoreError(description: "write failed: \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }
    }

    func read(_ id: String, offset: Int, length: Int) throws -> Data {
        if length == 0 { return Data() }
        let fd = open(url(id).path, O_RDONLY)
        guard fd >= 0 else { throw ByteStoreError(description: "blob data \(id) is missing") }
        defer { close(fd) }
        var data = Data(count: length)
        let got = data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> Int in
            var done = 0
            while done < length {
                let n = pread(fd, raw.baseAddress! + done, length - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                done += n
            }
            return done
        }
        guard got == length else { throw ByteStoreError(description: "blob data \(id) is shorter than recorded") }
        return data
    }

    func delete(_ id: String) {
        unlink(url(id).path)
    }

    func orphanCandidates(olderThan date: Date) -> [String] {
        let fm = FileManager.default
        let limit = date.timeIntervalSince1970
        var ids: [String] = []
        for dir in (try? fm.contentsOfDirectory(atPath: root.path)) ?? [] {
            for name in (try? fm.contentsOfDirectory(atPath: root.appendingPathComponent(dir).path)) ?? [] {
                let path = root.appendingPathComponent(dir).appendingPathComponent(name).path
                var info = stat()
                guard stat(path, &info) == 0 else { continue }
                let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
                guard modified < limit else { continue }  // written since the sweep began: not ours to judge
                if name.hasPrefix(".") && name.hasSuffix(".tmp") {
                    // An interrupted write: never acknowledged, safe to drop.
                    unlink(path)
                } else {
                    ids.append(name)
                }
            }
        }
        return ids
    }
}

/// Bytes in memory, for `--in-memory` and tests.
final class MemoryByteStore: ByteStore, @unchecked Sendable {
    private let lock = NSLock()
    private var objects: [String: Data] = [:]
    private var next = 0

    func put(_ bytes: Data) throws -> String {
        lock.withLock {
            next += 1
            let id = String(next)
            objects[id] = bytes
            return id
        }
    }

    func concatenate(_ pieces: [(id: String, offset: Int, length: Int)]) throws -> String {
        var out = Data()
        for piece in pieces { out.append(try read(piece.id, offset: piece.offset, length: piece.length)) }
        return try put(out)
    }

    func read(_ id: String, offset: Int, length: Int) throws -> Data {
        try lock.withLock {
            guard let data = objects[id], offset + length <= data.count else {
                throw ByteStoreError(description: "blob data \(id) is missing")
            }
            return data.subdata(in: data.startIndex + offset ..< data.startIndex + offset + length)
        }
    }

    func delete(_ id: String) { lock.withLock { _ = objects.removeValue(forKey: id) } }

    func orphanCandidates(olderThan date: Date) -> [String] { lock.withLock { Array(objects.keys) } }
}
