import Foundation
@testable import StorageEmulator
import Testing

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
