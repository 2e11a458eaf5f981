import Foundation
import StorageProtocol

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

/// How many stepped concatenations hold a blocking thread at once: two, so at least two of
/// the pool's four threads are always free for every other request, however many clients
/// commit long block lists or append to large append blobs together. Waiters take their turn
/// in order.
actor StepGate {
    static let shared = StepGate(limit: 2)
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { free = limit }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }

    /// Runs one step on the blocking threads once a turn is free.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        await acquire()
        do {
            let result = try await BlockingPool.run(body)
            release()
            return result
        } catch {
            release()
            throw error
        }
    }
}

extension ByteStore {
    /// The pieces as one new object, composed without copying where the store can, else
    /// concatenated a step at a time (``concatenateInSteps(_:)``).
    func composeFairly(_ pieces: [(id: String, offset: Int, length: Int)]) async throws -> String {
        if let id = try await BlockingPool.run({ try self.compose(pieces) }) { return id }
        return try await concatenateInSteps(pieces)
    }

    /// The pieces copied into one new object a step at a time (``SteppedConcatenation``), each
    /// step a job on the blocking threads taken through ``StepGate``.
    func concatenateInSteps(_ pieces: [(id: String, offset: Int, length: Int)]) async throws -> String {
        // One step's worth (a small append, a short list) is copied at once, as before: no turn
        // to wait for and no flush of its own, which every append to a small blob would pay.
        if pieces.reduce(0, { $0 + $1.length }) <= SteppedConcatenation.stepBytes {
            return try await BlockingPool.run { try self.concatenate(pieces) }
        }
        let work = SteppedConcatenation(store: self, pieces: pieces)
        let gate = StepGate.shared
        do {
            while try await gate.run({ try work.step() }) { try Task.checkCancellation() }
            return try await BlockingPool.run { try work.finish() }
        } catch {
            try? await BlockingPool.run { work.discard() }
            throw error
        }
    }
}
