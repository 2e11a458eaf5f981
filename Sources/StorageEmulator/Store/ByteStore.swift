import CLinux
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where blob and block bytes live, addressed by an id the store makes up.
///
/// Blob names never become file names: a name is only a key in SQLite, and the bytes sit
/// in a file named by a random id, so no name can reach outside the data directory.
///
/// Every method may block on the disk: callers run them through `BlockingPool`.
protocol ByteStore: Sendable {
    /// Stores bytes and returns their id; on disk they are durable after the next
    /// ``makeDurable()``.
    func put(_ bytes: Data) throws -> String
    /// A new object written piece by piece (an upload streamed from the network); given its
    /// id by `finish()`, durable only after the next ``makeDurable()`` — so every commit that
    /// refers to stored bytes must go through `GroupCommit`, which calls it first.
    func makeWriter() throws -> any ByteWriter
    /// An open object to read ranges of; on disk it stays readable after a concurrent
    /// overwrite deletes its file.
    func open(_ id: String) throws -> any ByteReader
    /// Concatenates stored pieces (id, offset, length) into a new stored object.
    func concatenate(_ pieces: [(id: String, offset: Int, length: Int)]) throws -> String
    /// The pieces as one new object that refers to their bytes where the store can instead of
    /// copying them (Put Block List: a blob made of its staged blocks); nil where it would have
    /// to copy them — the caller concatenates then, a step at a time (``concatenateInSteps``).
    func compose(_ pieces: [(id: String, offset: Int, length: Int)]) throws -> String?
    /// The same bytes under a new id, without copying them where the store can (a hard link
    /// on disk: objects never change once written, so two names of one file are two
    /// independent objects — deleting one leaves the other). Blob snapshots are made so.
    func clone(_ id: String) throws -> String
    /// `length` bytes from `offset`.
    func read(_ id: String, offset: Int, length: Int) throws -> Data
    func delete(_ id: String)
    /// Ids last modified before `date`, for removing orphans left by a crash between writing
    /// bytes and committing metadata; interrupted temporary files older than `date` go too.
    func orphanCandidates(olderThan date: Date) -> [String]
    /// Makes every file finished since the last call durable, with one flush for all of them
    /// (group commit: the database commit that refers to them comes after this).
    func makeDurable() throws
}

struct ByteStoreError: Error, CustomStringConvertible {
    var description: String
    /// A hard link the file system would not make (``FileByteStore/compose(_:)`` then copies).
    var linkRefused = false

    init(description: String) { self.description = description }
}

/// An object being written; used by one request at a time, its calls one after another.
protocol ByteWriter: Sendable {
    func append(_ bytes: UnsafeRawBufferPointer) throws
    /// Puts the bytes in place and returns their id (durable after the store's next
    /// `makeDurable()`, not yet).
    func finish() throws -> String
    /// Drops what was written (a failed or refused upload).
    func discard()
    /// Puts what was appended so far on disk (`fdatasync`): a long write that does so as it
    /// goes leaves little for another request's flush (`syncfs`) to wait for.
    func writeBack() throws
}

/// A stored object opened for reading.
protocol ByteReader: Sendable {
    func read(offset: Int, length: Int) throws -> Data
    func close()
}

/// Bytes in files under `<data-dir>/blobs/<2 hex>/<id>`, each written to a temporary name and
/// renamed, so a crash leaves either the whole file or none; ``makeDurable()`` then flushes
/// all files finished since the last flush with one `syncfs`, before the commit that refers to
/// them. A crash before that flush can leave a partial file at its final name — never one a
/// row refers to, so the next start's sweep removes it.
final class FileByteStore: ByteStore {
    let root: URL
    /// The root folder, open for `syncfs`.
    private let rootFD: Int32
    /// Whether a file was finished since the last flush.
    private let unsynced = Atomic<Bool>(false)
    /// The flush: `syncfs` (tests count the calls).
    private let sync: @Sendable (Int32) -> Int32

    init(root: URL, sync: @escaping @Sendable (Int32) -> Int32 = { azs_syncfs($0) }) throws {
        self.root = root
        self.sync = sync
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        rootFD = Glibc.open(root.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard rootFD >= 0 else { throw ByteStoreError(description: "cannot open \(root.path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(rootFD) }

    func finished() { unsynced.store(true, ordering: .releasing) }

    func makeDurable() throws {
        guard unsynced.exchange(false, ordering: .acquiringAndReleasing) else { return }
        guard sync(rootFD) == 0 else {
            unsynced.store(true, ordering: .releasing)
            throw ByteStoreError(description: "syncfs failed: \(String(cString: strerror(errno)))")
        }
    }

    func url(_ id: String) -> URL {
        root.appendingPathComponent(String(id.prefix(2)), isDirectory: true).appendingPathComponent(id)
    }

    private static func newID() -> String { UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "") }

    func put(_ bytes: Data) throws -> String {
        let writer = try FileByteWriter(store: self)
        do {
            try bytes.withUnsafeBytes { try writer.append($0) }
            return try writer.finish()
        } catch {
            writer.discard()
            throw error
        }
    }

    func concatenate(_ pieces: [(id: String, offset: Int, length: Int)]) throws -> String {
        let writer = try FileByteWriter(store: self)
        do {
            // Each object's manifest read once and each file opened once, whatever the number
            // of pieces naming them (a block list may name one composed object's blocks 50,000
            // times).
            var manifests: [String: [Segment]] = [:]
            var files: [String: Int32] = [:]
            defer { for fd in files.values { close(fd) } }
            for piece in pieces {
                if manifests[piece.id] == nil { manifests[piece.id] = try segments(of: piece.id) }
                for segment in try Self.slice(manifests[piece.id]!, offset: piece.offset, length: piece.length, id: piece.id) {
                    if files[segment.path] == nil {
                        let fd = Glibc.open(segment.path, O_RDONLY | O_CLOEXEC)
                        guard fd >= 0 else { throw ByteStoreError(description: "blob data \(piece.id) is missing") }
                        files[segment.path] = fd
                    }
                    var done = 0
                    while done < segment.length {
                        let n = min(4 << 20, segment.length - done)
                        try Self.read(files[segment.path]!, id: piece.id, offset: segment.offset + done, length: n).withUnsafeBytes {
                            try writer.append($0)
                        }
                        done += n
                    }
                }
            }
            return try writer.finish()
        } catch {
            writer.discard()
            throw error
        }
    }

    func makeWriter() throws -> any ByteWriter { try FileByteWriter(store: self) }

    func clone(_ id: String) throws -> String {
        if Self.isComposed(id) { return try cloneComposed(id) }
        let (newID, final, _) = try newFile()
        guard link(url(id).path, final.path) == 0 else {
            throw ByteStoreError(description: "cannot link blob data \(id): \(String(cString: strerror(errno)))")
        }
        finished()
        return newID
    }

    func open(_ id: String) throws -> any ByteReader {
        if Self.isComposed(id) { return try openComposed(id) }
        let fd = Glibc.open(url(id).path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ByteStoreError(description: "blob data \(id) is missing") }
        return FileByteReader(id: id, fd: fd)
    }

    /// A new id and where its file goes.
    func newFile(prefix: String = "") throws -> (id: String, final: URL, temp: URL) {
        let id = prefix + Self.newID().dropFirst(prefix.count)
        let final = url(id)
        let dir = final.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return (id, final, dir.appendingPathComponent(".\(id).tmp"))
    }

    static func writeAll(_ fd: Int32, _ raw: UnsafeRawBufferPointer) throws {
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

    func read(_ id: String, offset: Int, length: Int) throws -> Data {
        if length == 0 { return Data() }
        if Self.isComposed(id) {
            let reader = try open(id)
            defer { reader.close() }
            return try reader.read(offset: offset, length: length)
        }
        let fd = Glibc.open(url(id).path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ByteStoreError(description: "blob data \(id) is missing") }
        defer { close(fd) }
        return try Self.read(fd, id: id, offset: offset, length: length)
    }

    static func read(_ fd: Int32, id: String, offset: Int, length: Int) throws -> Data {
        if length == 0 { return Data() }
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
        if Self.isComposed(id) { return Self.removeFolder(url(id).path) }
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
                    if (info.st_mode & S_IFMT) == S_IFDIR { Self.removeFolder(path) } else { unlink(path) }
                } else {
                    ids.append(name)
                }
            }
        }
        return ids
    }
}

/// A file being written: a temporary name in its final folder, written and renamed by
/// `finish()`, so a crash leaves either the whole file or none (made durable by the store's
/// next ``FileByteStore/makeDurable()``). One request owns it and calls it from one task, one
/// call at a time, always through `BlockingPool` (azseed's own blocking-I/O threads): its writes never run on the
/// cooperative pool.
final class FileByteWriter: ByteWriter, @unchecked Sendable {
    private let store: FileByteStore
    private let id: String
    private let final: URL
    private let temp: URL
    private var fd: Int32

    init(store: FileByteStore) throws {
        self.store = store
        (id, final, temp) = try store.newFile()
        fd = Glibc.open(temp.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ByteStoreError(description: "cannot create \(temp.path): \(String(cString: strerror(errno)))") }
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws { try FileByteStore.writeAll(fd, bytes) }

    func writeBack() throws {
        guard fdatasync(fd) == 0 else { throw ByteStoreError(description: "cannot write \(temp.path) to disk: \(String(cString: strerror(errno)))") }
    }

    func finish() throws -> String {
        defer { fd = -1 }
        guard close(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temp.path)
            throw ByteStoreError(description: "cannot close \(temp.path): \(reason)")
        }
        guard rename(temp.path, final.path) == 0 else {
            unlink(temp.path)
            throw ByteStoreError(description: "cannot rename into \(final.path): \(String(cString: strerror(errno)))")
        }
        store.finished()
        return id
    }

    func discard() {
        guard fd >= 0 else { return }
        close(fd)
        unlink(temp.path)
        fd = -1
    }
}

/// An open blob file. Reads are `pread`s, so concurrent readers of one reader do not race.
final class FileByteReader: ByteReader, Sendable {
    let id: String
    private let fd: Mutex<Int32>

    init(id: String, fd: Int32) {
        self.id = id
        self.fd = Mutex(fd)
    }

    func read(offset: Int, length: Int) throws -> Data {
        let current = fd.withLock { $0 }
        guard current >= 0 else { throw ByteStoreError(description: "blob data \(id) was closed") }
        return try FileByteStore.read(current, id: id, offset: offset, length: length)
    }

    func close() {
        fd.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }

    deinit { close() }
}

/// Bytes in memory, for `--in-memory` and tests. An object is a list of buffers: a composed
/// one (an append, a block list) shares its pieces' buffers instead of copying them.
final class MemoryByteStore: ByteStore, @unchecked Sendable {
    /// The most buffers one object is made of; a composition of more is copied into one.
    static let maxComposedPieces = 256

    private let lock = NSLock()
    private var objects: [String: [Data]] = [:]
    private var next = 0

    func makeDurable() {}

    func put(_ bytes: Data) throws -> String { store([bytes]) }

    private func store(_ parts: [Data]) -> String {
        lock.withLock {
            next += 1
            let id = String(next)
            objects[id] = parts
            return id
        }
    }

    private func parts(_ id: String) throws -> [Data] {
        guard let parts = lock.withLock({ objects[id] }) else { throw ByteStoreError(description: "blob data \(id) is missing") }
        return parts
    }

    func concatenate(_ pieces: [(id: String, offset: Int, length: Int)]) throws -> String {
        var out = Data()
        for piece in pieces { out.append(try read(piece.id, offset: piece.offset, length: piece.length)) }
        return try put(out)
    }

    func compose(_ pieces: [(id: String, offset: Int, length: Int)]) throws -> String? {
        guard pieces.count > 1 else { return nil }
        var composed: [Data] = []
        for piece in pieces {
            composed += try Self.slices(try parts(piece.id), offset: piece.offset, length: piece.length, id: piece.id)
            guard composed.count <= Self.maxComposedPieces else { return nil }
        }
        return store(composed)
    }

    /// The buffers holding `offset..<offset+length` of an object made of `parts` (slices share
    /// the buffers' storage).
    static func slices(_ parts: [Data], offset: Int, length: Int, id: String) throws -> [Data] {
        guard offset >= 0, length >= 0, offset <= Int.max - length else {
            throw ByteStoreError(description: "blob data \(id) is shorter than recorded")
        }
        var out: [Data] = []
        var position = 0
        for part in parts {
            let start = max(offset, position)
            let end = min(offset + length, position + part.count)
            if start < end { out.append(part[part.startIndex + start - position..<part.startIndex + end - position]) }
            position += part.count
            if position >= offset + length { break }
        }
        guard out.reduce(0, { $0 + $1.count }) == length else { throw ByteStoreError(description: "blob data \(id) is shorter than recorded") }
        return out
    }

    /// `length` bytes from `offset` of an object made of `parts`, in one buffer.
    static func read(_ parts: [Data], offset: Int, length: Int, id: String) throws -> Data {
        let slices = try slices(parts, offset: offset, length: length, id: id)
        if slices.count == 1 { return Data(slices[0]) }
        var out = Data(capacity: length)
        for slice in slices { out.append(slice) }
        return out
    }

    func read(_ id: String, offset: Int, length: Int) throws -> Data {
        try Self.read(try parts(id), offset: offset, length: length, id: id)
    }

    func delete(_ id: String) { lock.withLock { _ = objects.removeValue(forKey: id) } }

    func clone(_ id: String) throws -> String { store(try parts(id)) }

    func makeWriter() throws -> any ByteWriter { MemoryByteWriter(store: self) }

    func open(_ id: String) throws -> any ByteReader { MemoryByteReader(id: id, parts: try parts(id)) }

    func orphanCandidates(olderThan date: Date) -> [String] { lock.withLock { Array(objects.keys) } }
}

/// An upload into memory: the pieces gathered once, stored at `finish()`.
final class MemoryByteWriter: ByteWriter, @unchecked Sendable {
    private let store: MemoryByteStore
    private var data = Data()

    init(store: MemoryByteStore) { self.store = store }

    func append(_ bytes: UnsafeRawBufferPointer) throws { data.append(contentsOf: bytes) }
    func finish() throws -> String { try store.put(data) }
    func discard() { data = Data() }
    func writeBack() throws {}
}

/// A stored object in memory (shared, not copied).
struct MemoryByteReader: ByteReader {
    let id: String
    let parts: [Data]

    func read(offset: Int, length: Int) throws -> Data { try MemoryByteStore.read(parts, offset: offset, length: length, id: id) }

    func close() {}
}
