import Foundation
import StorageProtocol
import Synchronization

/// Reads a page blob: its extents' bytes where they were written, zeros elsewhere. The
/// extents' objects are pinned (``BytePins``) when the reader is made, so a concurrent Put
/// Page that frees one does not take it away, and opened as the read reaches them, at most
/// ``openLimit`` at a time: a blob of many thousand extents costs a few descriptors, not one
/// each.
final class SparseReader: ByteReader, Sendable {
    static let openLimit = 16

    let size: Int
    /// Written extents in order (cleared ones left out).
    let extents: [PageExtent]
    private let bytes: any ByteStore
    private let pins: BytePins
    private let pinned: Set<String>
    /// Open objects, most recently used last.
    private let open = Mutex<[(String, any ByteReader)]>([])
    private let closed = Atomic<Bool>(false)

    init(size: Int, extents: [PageExtent], bytes: any ByteStore, pins: BytePins) {
        self.size = size
        self.extents = extents
        self.bytes = bytes
        self.pins = pins
        pinned = Set(extents.map(\.data))
    }

    private func reader(_ id: String) throws -> any ByteReader {
        try open.withLock { list in
            if let index = list.firstIndex(where: { $0.0 == id }) {
                let hit = list.remove(at: index)
                list.append(hit)
                return hit.1
            }
            let made = try bytes.open(id)
            list.append((id, made))
            if list.count > Self.openLimit { list.removeFirst().1.close() }
            return made
        }
    }

    func read(offset: Int, length: Int) throws -> Data {
        guard offset >= 0, length >= 0, offset + length <= size else { throw ByteStoreError(description: "page blob is shorter than the range read") }
        var out = Data(count: length)
        // The first extent that can overlap, by binary search: a read costs the extents it covers.
        var low = 0
        var high = extents.count
        while low < high {
            let mid = (low + high) / 2
            if extents[mid].end <= offset { low = mid + 1 } else { high = mid }
        }
        for extent in extents[low...] {
            guard extent.start < offset + length else { break }
            guard let part = extent.clipped(to: offset, offset + length) else { continue }
            let piece = try reader(part.data).read(offset: part.dataOffset, length: part.length)
            out.replaceSubrange((part.start - offset)..<(part.end - offset), with: piece)
        }
        return out
    }

    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let readers = open.withLock { list in
            defer { list.removeAll() }
            return list.map(\.1)
        }
        for reader in readers { reader.close() }
        let free = pins.unpin(pinned)
        guard !free.isEmpty else { return }
        // Deletion is file work: on azseed's own blocking-I/O threads, not the caller's.
        let bytes = self.bytes
        Task { _ = try? await BlockingPool.run { for id in free { bytes.delete(id) } } }
    }

    deinit { close() }
}
