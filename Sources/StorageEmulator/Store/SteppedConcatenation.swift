import AzureStorage
import Foundation

/// A concatenation of stored pieces into a new object, done a bounded number of bytes at a
/// time: each step is its own job on the blocking threads, so the pool's other jobs (another
/// client's upload, a read) run between two steps. One Put Block List naming a staged block
/// 1,200 times once built its whole blob in one job and held a shared thread for seconds;
/// four of them stalled every client (issue 45).
///
/// Steps run one after another (never two at once); the state lives in this object between
/// them, so it is `@unchecked Sendable` as a job handed from one thread to the next.
final class SteppedConcatenation: @unchecked Sendable {
    /// The bytes one step copies at most.
    static let stepBytes = 4 << 20

    private let store: any ByteStore
    private let pieces: [(id: String, offset: Int, length: Int)]
    private var writer: (any ByteWriter)?
    /// The reader of the piece being copied: one open at a time (a block list may name 50,000
    /// blocks; a reader each would exhaust the descriptors).
    private var reader: (id: String, reader: any ByteReader)?
    private var piece = 0
    private var done = 0

    init(store: any ByteStore, pieces: [(id: String, offset: Int, length: Int)]) {
        self.store = store
        self.pieces = pieces
    }

    /// Copies up to ``stepBytes``; true while pieces are left.
    func step() throws -> Bool {
        if writer == nil { writer = try store.makeWriter() }
        var budget = Self.stepBytes
        while piece < pieces.count && budget > 0 {
            let current = pieces[piece]
            if reader?.id != current.id {
                reader?.reader.close()
                reader = nil
                reader = (current.id, try store.open(current.id))
            }
            let n = min(budget, current.length - done)
            if n > 0 {
                try reader!.reader.read(offset: current.offset + done, length: n).withUnsafeBytes { try writer!.append($0) }
                done += n
                budget -= n
            }
            if done == current.length {
                piece += 1
                done = 0
            }
        }
        // On disk before the next step: the blob's pages would otherwise pile up dirty, and every
        // other client's commit (its flush is `syncfs`, the whole file system) would wait for them.
        try writer!.writeBack()
        return piece < pieces.count
    }

    /// The new object's id, once every step is done.
    func finish() throws -> String {
        reader?.reader.close()
        reader = nil
        if writer == nil { writer = try store.makeWriter() }
        return try writer!.finish()
    }

    /// Drops what was written (a failed commit).
    func discard() {
        reader?.reader.close()
        reader = nil
        writer?.discard()
    }
}

extension ByteStore {
    /// The pieces as one new object, composed without copying where the store can, else
    /// concatenated a step at a time (``SteppedConcatenation``) on the blocking threads.
    func composeFairly(_ pieces: [(id: String, offset: Int, length: Int)]) async throws -> String {
        if let id = try await BlockingPool.run({ try self.compose(pieces) }) { return id }
        let work = SteppedConcatenation(store: self, pieces: pieces)
        do {
            while try await BlockingPool.run({ try work.step() }) { try Task.checkCancellation() }
            return try await BlockingPool.run { try work.finish() }
        } catch {
            try? await BlockingPool.run { work.discard() }
            throw error
        }
    }
}
