import Foundation
import Testing

@testable import StorageEmulator

/// Append Block composes the blob of its blocks (issue 46): before, every append copied the
/// whole blob (256 MiB of 4 MiB appends copied 8 GiB). The bytes read back are the blocks in
/// order, on disk and in memory, across the point where the pieces run out and the blob is
/// copied once; the object an append replaced can go at once.
@Suite(.serialized) struct AppendCompositionTests {
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static func stores() throws -> [any ByteStore] { [try ByteStoreTests.store(), MemoryByteStore()] }

    @Test(arguments: [1, 2, 3])
    func appendedBlocksReadBackInOrderPastThePieceLimit(seed: Int) async throws {
        for store in try Self.stores() {
            var random = Generator(state: UInt64(seed))
            var expected = Data()
            var blob = (id: try store.put(Data()), size: 0)
            for round in 0..<(FileByteStore.maxComposedPieces + 40) {
                // Now and then an empty block; mostly small ones of any size.
                let size = random.next(8) == 0 ? 0 : random.next(3000) + 1
                let block = Data((0..<size).map { UInt8(($0 &* 31 &+ round &* 7 &+ seed) & 0xFF) })
                let staged = try store.put(block)
                let next = try await store.appending(blob, (staged, size))
                // The request's upload and the replaced object are deleted after the swap.
                store.delete(staged)
                store.delete(blob.id)
                blob = (next, blob.size + size)
                expected.append(block)
                if round == 20, store is FileByteStore {
                    #expect(FileByteStore.isComposed(blob.id), "20 appends are composed, not copied")
                }
            }
            #expect(try store.read(blob.id, offset: 0, length: blob.size) == expected)
            for _ in 0..<20 {
                let start = random.next(blob.size)
                let length = random.next(blob.size - start + 1)
                #expect(try store.read(blob.id, offset: start, length: length) == expected[start..<start + length])
                let reader = try store.open(blob.id)
                #expect(try reader.read(offset: start, length: length) == expected[start..<start + length])
                reader.close()
            }
        }
    }
}
