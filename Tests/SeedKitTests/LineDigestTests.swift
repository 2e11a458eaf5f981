import Crypto
import PropertyBased
import StorageProtocol
import Testing

@testable import SeedKit

/// Issue 51: the desired state's digest hashed on another thread, a chunk at a time, is the
/// digest of the same lines hashed in place, in their order.
@Suite struct LineDigestTests {
    /// Line `seed` of a sequence: mostly entities (a few with the same keys and other values),
    /// now and then a line of bytes as the containers and tables give.
    static func line(_ seed: UInt64) -> (entity: TableEntity?, bytes: [UInt8]) {
        if seed % 5 == 0 { return (nil, Array("table\u{0}t\(seed)\n".utf8)) }
        var entity = TableEntity(partitionKey: "p\(seed % 3)", rowKey: "r\(seed)")
        entity.properties["Text"] = .string(String(repeating: "\u{E9}x\"", count: Int(seed % 400)))
        entity.properties["Number"] = .int64(Int64(bitPattern: seed &* 0x9E37_79B9_7F4A_7C15))
        if seed % 2 == 0 { entity.properties["When"] = .dateTime(EdmDateTime(ticks: Int64(seed % 1_000_000))) }
        return (entity, [])
    }

    @Test func hashedInChunksElsewhereIsHashedInPlace() async {
        await propertyCheck(
            input: Gen.int(in: 0...120), Gen.int(in: 1...6), Gen.int(in: 1...3_000), Gen.int(in: 1...3), Gen.uint64(in: 0...UInt64.max)
        ) { count, chunkSize, chunkBytes, maxInFlight, seed in
            var inPlace = SHA256()
            let pipelined = LineDigest(chunkSize: chunkSize * 20, chunkBytes: chunkBytes, maxInFlight: maxInFlight)
            for i in 0..<count {
                let (entity, bytes) = Self.line(seed &+ UInt64(i))
                if let entity {
                    var line: [UInt8] = []
                    EntityJSONEncoder.append(entity, to: &line)
                    line.append(UInt8(ascii: "\n"))
                    inPlace.update(data: line)
                    await pipelined.add(entity)
                } else {
                    inPlace.update(data: bytes)
                    pipelined.add(bytes)
                }
            }
            #expect(await pipelined.finalize() == inPlace.finalize())
        }
    }

    /// Lines in another order are another digest: the chunks are hashed in the order given.
    @Test func theOrderOfTheLinesCounts() async {
        let a = Self.line(1).entity!
        let b = Self.line(2).entity!
        func digest(_ entities: [TableEntity]) async -> SHA256.Digest {
            let pipelined = LineDigest(chunkSize: 1, maxInFlight: 3)
            for entity in entities { await pipelined.add(entity) }
            return await pipelined.finalize()
        }
        #expect(await digest([a, b]) != digest([b, a]))
    }
}
