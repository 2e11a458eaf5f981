import Foundation
import Testing

@testable import StorageEmulator

/// Put Block List's composed objects: links to the blocks' files, read as their
/// concatenation, independent of every other name of those files.
@Suite struct ComposedBytesTests {
    static func bytes(_ count: Int, _ salt: Int) -> Data { Data((0..<count).map { UInt8(($0 * 7 + salt) % 251) }) }

    @Test func aComposedObjectReadsAsItsPiecesInOrderAndOutlivesThem() throws {
        let store = try ByteStoreTests.store()
        let a = Self.bytes(1000, 1)
        let b = Self.bytes(3000, 2)
        let (idA, idB) = (try store.put(a), try store.put(b))
        // B, a slice of A, B again: a block list may name a block twice.
        let id = try #require(try store.compose([(idB, 0, 3000), (idA, 100, 500), (idB, 0, 3000)]))
        #expect(FileByteStore.isComposed(id))
        let whole = b + a[100..<600] + b
        #expect(try store.read(id, offset: 0, length: whole.count) == whole)
        #expect(try store.read(id, offset: 2990, length: 520) == whole[2990..<3510])
        // The staged blocks go (committed, or a later block list replaced them): the blob stays.
        store.delete(idA)
        store.delete(idB)
        let reader = try store.open(id)
        #expect(try reader.read(offset: 3400, length: 3100) == whole[3400..<6500])
        // A snapshot is a clone; a later block list reusing committed blocks composes from the
        // composed object; deleting the blob leaves both whole.
        let snapshot = try store.clone(id)
        let reused = try #require(try store.compose([(id, 3000, 500), (id, 0, 10)]))
        store.delete(id)
        #expect(!FileManager.default.fileExists(atPath: store.url(id).path))
        // (A reader opens each piece as it reaches it: the emulator pins an object while it is
        // read, so a delete waits for it — test_blob_service.py.)
        reader.close()
        #expect(try store.read(snapshot, offset: 0, length: whole.count) == whole)
        #expect(try store.read(reused, offset: 0, length: 510) == a[100..<600] + b[0..<10])
        #expect(throws: ByteStoreError.self) { try store.read(reused, offset: 0, length: 511) }
    }

    @Test func longListsAreCopiedAndHalfMadeFoldersAreSwept() throws {
        let store = try ByteStoreTests.store()
        let piece = try store.put(Self.bytes(10, 3))
        let long = Array(repeating: (piece, 0, 10), count: FileByteStore.maxComposedPieces + 1)
        #expect(try store.compose(long) == nil, "a list too long to compose is left to be copied")
        let many = try store.concatenate(long)
        #expect(!FileByteStore.isComposed(many))
        #expect(try store.read(many, offset: 0, length: 20) == Self.bytes(10, 3) + Self.bytes(10, 3))
        // A crash while a composed object was being made: its temporary folder goes at the
        // next start; the finished one is judged like any file (kept while a row names it).
        let composed = try #require(try store.compose([(piece, 0, 10), (piece, 0, 5)]))
        let halfMade = store.root.appendingPathComponent("ab/.mab0000000000000000000000000000.tmp")
        try FileManager.default.createDirectory(at: halfMade, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: halfMade.appendingPathComponent("0"))
        let later = Date().addingTimeInterval(60)
        let candidates = store.orphanCandidates(olderThan: later)
        #expect(!FileManager.default.fileExists(atPath: halfMade.path))
        #expect(candidates.contains(composed))
        store.delete(composed)
        #expect(!FileManager.default.fileExists(atPath: store.url(composed).path))
        #expect(try store.read(piece, offset: 0, length: 10) == Self.bytes(10, 3))
    }

    /// Another local user who can write the data folder can already change any blob; a
    /// manifest still never leads a read out of its object's folder.
    @Test func aManifestNamingAPathOutsideItsFolderIsRefused() throws {
        let store = try ByteStoreTests.store()
        let piece = try store.put(Self.bytes(10, 4))
        let composed = try #require(try store.compose([(piece, 0, 10), (piece, 0, 10)]))
        let outside = store.root.appendingPathComponent("secret")
        try Data("not a blob".utf8).write(to: outside)
        for line in ["../../secret 0 10\n", "/etc/passwd 0 10\n", "0 -5 10\n", "0 0 -1\n"] {
            try Data(line.utf8).write(to: store.url(composed).appendingPathComponent("manifest"))
            #expect(throws: ByteStoreError.self) { try store.read(composed, offset: 0, length: 10) }
            #expect(throws: ByteStoreError.self) { try store.open(composed) }
        }
    }
}
