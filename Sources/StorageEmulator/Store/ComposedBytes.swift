import Foundation
import StorageProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A blob committed from its staged blocks without copying them (Put Block List).
///
/// A composed object is a folder `blobs/<2 hex>/m<31 hex>` holding a hard link to each piece's
/// file (`0`, `1`, …) and a `manifest`: one line per piece, `<link> <offset> <length>`. Stored
/// objects never change once written, so a link is as good as a copy — deleting the staged
/// block (or the blob that held a reused block) leaves the composed object whole — and 1 GiB
/// of blocks becomes a blob by writing a few hundred directory entries, not 1 GiB again.
/// Made like a file: built under a temporary name in its final folder, renamed into place,
/// durable with the store's next `syncfs`; a crash leaves the whole folder or none.
extension FileByteStore {
    /// The most pieces composed: a reader holds a descriptor for each, so a block list of more
    /// is copied into one file instead.
    static let maxComposedPieces = 256

    static func isComposed(_ id: String) -> Bool { id.utf8.first == UInt8(ascii: "m") }

    /// A piece of a stored object: the file it is in and where.
    struct Segment {
        var path: String
        var offset: Int
        var length: Int
    }

    func compose(_ pieces: [(id: String, offset: Int, length: Int)]) throws -> String? {
        guard pieces.count > 1, pieces.count <= Self.maxComposedPieces else { return nil }
        var segments: [Segment] = []
        for piece in pieces {
            segments += try self.segments(of: piece.id, offset: piece.offset, length: piece.length)
            guard segments.count <= Self.maxComposedPieces else { return nil }
        }
        do {
            return try makeComposed(segments)
        } catch let error as ByteStoreError where error.linkRefused {
            // A file system without hard links, or a file at its link limit: copied.
            return nil
        }
    }

    func cloneComposed(_ id: String) throws -> String {
        let segments = try segments(of: id)
        do {
            return try makeComposed(segments)
        } catch let error as ByteStoreError where error.linkRefused {
            // A file at its link limit (many snapshots of a blob naming one block many times):
            // the snapshot gets a copy.
            return try concatenate([(id, 0, segments.reduce(0) { $0 + $1.length })])
        }
    }

    private func makeComposed(_ segments: [Segment]) throws -> String {
        let (id, final, temp) = try newFile(prefix: "m")
        guard mkdir(temp.path, 0o700) == 0 else {
            throw ByteStoreError(description: "cannot create \(temp.path): \(String(cString: strerror(errno)))")
        }
        do {
            var manifest = ""
            for (index, segment) in segments.enumerated() {
                guard link(segment.path, temp.appendingPathComponent(String(index)).path) == 0 else {
                    let code = errno
                    throw ByteStoreError(
                        description: "cannot link blob data of \(id): \(String(cString: strerror(code)))",
                        linkRefused: code == EMLINK || code == EPERM || code == EXDEV)
                }
                manifest += "\(index) \(segment.offset) \(segment.length)\n"
            }
            let fd = Glibc.open(temp.appendingPathComponent("manifest").path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw ByteStoreError(description: "cannot write a manifest in \(temp.path): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            try manifest.utf8.withContiguousStorageIfAvailable { try Self.writeAll(fd, UnsafeRawBufferPointer($0)) }
            guard rename(temp.path, final.path) == 0 else {
                throw ByteStoreError(description: "cannot rename into \(final.path): \(String(cString: strerror(errno)))")
            }
        } catch {
            Self.removeFolder(temp.path)
            throw error
        }
        finished()
        return id
    }

    /// Where the bytes `offset..<offset+length` of object `id` are (the whole object when
    /// `length` is nil).
    func segments(of id: String, offset: Int = 0, length: Int? = nil) throws -> [Segment] {
        var all: [Segment]
        if Self.isComposed(id) {
            let folder = url(id)
            let text: String
            do { text = try String(contentsOf: folder.appendingPathComponent("manifest"), encoding: .utf8) } catch {
                throw ByteStoreError(description: "blob data \(id) is missing")
            }
            all = []
            var total = 0
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ")
                // A link's name is its number: a manifest naming anything else (`../…`, a path
                // of its own) is refused, never followed out of the object's folder.
                guard fields.count == 3, !fields[0].isEmpty, fields[0].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                    let start = Int(fields[1]), let count = Int(fields[2]), start >= 0, count >= 0
                else {
                    throw ByteStoreError(description: "blob data \(id) has a damaged manifest")
                }
                all.append(Segment(path: folder.appendingPathComponent(String(fields[0])).path, offset: start, length: count))
                // Lengths that add up past Int.max (or a start past the end of a file's range)
                // are a damaged manifest, not arithmetic to trap on.
                total = try Self.sum(total, count, start, id)
            }
        } else {
            let path = url(id).path
            var info = stat()
            guard stat(path, &info) == 0 else { throw ByteStoreError(description: "blob data \(id) is missing") }
            all = [Segment(path: path, offset: 0, length: Int(info.st_size))]
        }
        guard let length else { return all }
        return try Self.slice(all, offset: offset, length: length, id: id)
    }

    /// The bytes `offset..<offset+length` of an object made of `all`, segment by segment.
    static func slice(_ all: [Segment], offset: Int, length: Int, id: String) throws -> [Segment] {
        guard offset >= 0, length >= 0, offset <= Int.max - length else {
            throw ByteStoreError(description: "blob data \(id) is shorter than recorded")
        }
        var out: [Segment] = []
        var position = 0
        for segment in all {
            let start = max(offset, position)
            let end = min(offset + length, position + segment.length)
            if start < end { out.append(Segment(path: segment.path, offset: segment.offset + start - position, length: end - start)) }
            position += segment.length
        }
        guard out.reduce(0, { $0 + $1.length }) == length else { throw ByteStoreError(description: "blob data \(id) is shorter than recorded") }
        return out
    }

    private static func sum(_ total: Int, _ count: Int, _ start: Int, _ id: String) throws -> Int {
        let (next, overflow) = total.addingReportingOverflow(count)
        guard !overflow, start <= Int.max - count else { throw ByteStoreError(description: "blob data \(id) has a damaged manifest") }
        return next
    }

    /// A reader over the pieces, each file opened when a read reaches it, a few at a time. Its
    /// files are not held open from the start (that cost a descriptor a piece, 256 for one
    /// reader): the emulator pins the object while it is read instead (``BytePins``), so a
    /// delete waits for the last reader.
    func openComposed(_ id: String) throws -> any ByteReader {
        ComposedByteReader(id: id, segments: try segments(of: id))
    }

    /// Removes a folder and the files in it (a composed object, or one left half made).
    static func removeFolder(_ path: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            unlink(path + "/" + name)
        }
        rmdir(path)
    }
}

extension ByteStoreError {
    init(description: String, linkRefused: Bool) {
        self.init(description: description)
        self.linkRefused = linkRefused
    }
}

/// An open composed object: reads cross its pieces (`pread`, so concurrent reads do not race),
/// opening each piece's file as a read reaches it and keeping at most ``openLimit`` open.
final class ComposedByteReader: ByteReader, Sendable {
    static let openLimit = 4

    let id: String
    private let segments: [FileByteStore.Segment]
    /// Open files by segment, most recently used last.
    private let open = Mutex<[(segment: Int, fd: Int32)]>([])
    private let closed = Atomic<Bool>(false)

    init(id: String, segments: [FileByteStore.Segment]) {
        self.id = id
        self.segments = segments
    }

    private func descriptor(_ segment: Int) throws -> Int32 {
        try open.withLock { list in
            if let index = list.firstIndex(where: { $0.segment == segment }) {
                let hit = list.remove(at: index)
                list.append(hit)
                return hit.fd
            }
            let fd = Glibc.open(segments[segment].path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw ByteStoreError(description: "blob data \(id) is missing") }
            list.append((segment, fd))
            if list.count > Self.openLimit { Glibc.close(list.removeFirst().fd) }
            return fd
        }
    }

    func read(offset: Int, length: Int) throws -> Data {
        guard !closed.load(ordering: .acquiring) else { throw ByteStoreError(description: "blob data \(id) was closed") }
        guard offset >= 0, length >= 0, offset <= Int.max - length else {
            throw ByteStoreError(description: "blob data \(id) is shorter than recorded")
        }
        var out = Data()
        out.reserveCapacity(length)
        var position = 0
        for (index, piece) in segments.enumerated() {
            let start = max(offset, position)
            let end = min(offset + length, position + piece.length)
            if start < end {
                out.append(try FileByteStore.read(try descriptor(index), id: id, offset: piece.offset + start - position, length: end - start))
            }
            position += piece.length
            if position >= offset + length { break }
        }
        guard out.count == length else { throw ByteStoreError(description: "blob data \(id) is shorter than recorded") }
        return out
    }

    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        open.withLock { list in
            for entry in list { Glibc.close(entry.fd) }
            list.removeAll()
        }
    }

    deinit { close() }
}

/// A reader of an object pinned while it is read (``BytePins``): deleting the object meanwhile
/// waits for its last reader, which then deletes it.
final class PinnedReader: ByteReader, Sendable {
    private let base: any ByteReader
    private let id: String
    private let bytes: any ByteStore
    private let pins: BytePins
    private let closed = Atomic<Bool>(false)

    init(base: any ByteReader, id: String, bytes: any ByteStore, pins: BytePins) {
        self.base = base
        self.id = id
        self.bytes = bytes
        self.pins = pins
    }

    func read(offset: Int, length: Int) throws -> Data { try base.read(offset: offset, length: length) }

    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        base.close()
        let free = pins.unpin([id])
        guard !free.isEmpty else { return }
        // Deletion is file work: on azseed's own blocking-I/O threads, not the caller's.
        let bytes = self.bytes
        Task { _ = try? await BlockingPool.run { for id in free { bytes.delete(id) } } }
    }

    deinit { close() }
}
