import Foundation
import Synchronization
import Testing

@testable import StorageEmulator

/// The byte store's crash-safety sweep and its streamed writers and readers.
@Suite struct ByteStoreTests {
    static func store() throws -> FileByteStore {
        let base = URL(fileURLWithPath: ProcessInfo.processInfo.environment["TMPDIR"] ?? NSTemporaryDirectory())
        return try FileByteStore(root: base.appendingPathComponent("bytes-\(UUID().uuidString)"))
    }

    /// The start-up sweep judges only files older than its start: a file (or an upload's
    /// temporary file) written since is never a candidate for deletion.
    @Test func theSweepNeverTouchesFilesWrittenAfterItBegan() throws {
        let store = try Self.store()
        let old = try store.put(Data("old".utf8))
        let writer = try store.makeWriter()
        try Data("in flight".utf8).withUnsafeBytes { try writer.append($0) }
        let hourAgo = Date().addingTimeInterval(-3600)
        let oldFile = store.root.appendingPathComponent(String(old.prefix(2))).appendingPathComponent(old)
        try FileManager.default.setAttributes([.modificationDate: hourAgo], ofItemAtPath: oldFile.path)
        let started = Date().addingTimeInterval(-60)
        let fresh = try store.put(Data("fresh".utf8))
        let candidates = store.orphanCandidates(olderThan: started)
        #expect(candidates == [old])
        #expect(!candidates.contains(fresh))
        // The in-flight upload's temporary file survived the sweep and still commits.
        let committed = try writer.finish()
        #expect(try store.read(committed, offset: 0, length: 9) == Data("in flight".utf8))
    }

    /// An open reader keeps its bytes readable after the file is deleted (an overwrite
    /// racing a download), and a discarded writer leaves nothing behind.
    @Test func readersOutliveDeletesAndDiscardedWritersLeaveNothing() throws {
        let store = try Self.store()
        let id = try store.put(Data((0..<1000).map { UInt8($0 % 256) }))
        let reader = try store.open(id)
        store.delete(id)
        #expect(try reader.read(offset: 10, length: 5) == Data([10, 11, 12, 13, 14]))
        reader.close()
        let writer = try store.makeWriter()
        try Data("partial".utf8).withUnsafeBytes { try writer.append($0) }
        writer.discard()
        #expect(store.orphanCandidates(olderThan: Date().addingTimeInterval(60)).isEmpty)
    }
}

/// Group durability: a finished file is flushed by the next `makeDurable`, once for all files
/// finished since the last one; a failed flush is tried again by the next call.
@Suite struct ByteStoreDurabilityTests {
    @Test func finishedFilesAreFlushedOnceByTheNextMakeDurable() throws {
        let base = URL(fileURLWithPath: ProcessInfo.processInfo.environment["TMPDIR"] ?? NSTemporaryDirectory())
        let calls = Mutex(0)
        let failNext = Mutex(false)
        let store = try FileByteStore(
            root: base.appendingPathComponent("durable-\(UUID().uuidString)"),
            sync: { _ in
                calls.withLock { $0 += 1 }
                return failNext.withLock { fail in
                    defer { fail = false }
                    return fail ? -1 : 0
                }
            })
        try store.makeDurable()
        #expect(calls.withLock { $0 } == 0, "nothing finished: no flush")
        _ = try store.put(Data("a".utf8))
        _ = try store.put(Data("b".utf8))
        let writer = try store.makeWriter()
        try Data("c".utf8).withUnsafeBytes { try writer.append($0) }
        _ = try writer.finish()
        try store.makeDurable()
        #expect(calls.withLock { $0 } == 1, "three files, one flush")
        try store.makeDurable()
        #expect(calls.withLock { $0 } == 1, "nothing new: no flush")
        _ = try store.put(Data("d".utf8))
        failNext.withLock { $0 = true }
        #expect(throws: ByteStoreError.self) { try store.makeDurable() }
        try store.makeDurable()
        #expect(calls.withLock { $0 } == 3, "a failed flush is retried by the next call")
    }
}
