import AzseedTestSupport
import AzureStorage
import Foundation
import Testing

@testable import SeedKit

/// `--shard I/N`: parts that are disjoint and together complete, made without the others.
@Suite struct ShardTests {
    @Test func parsingAndOwnership() throws {
        #expect(Shard("1/4") == Shard(index: 1, count: 4))
        for bad in ["4/4", "-1/2", "1/0", "x", "1/", "/2", "1/2/3"] { #expect(Shard(bad) == nil, "\(bad)") }
        // Every key belongs to exactly one shard, and the parts are about even.
        let shards = (0..<4).map { Shard(index: $0, count: 4)! }
        var sizes = [0, 0, 0, 0]
        for i in 0..<4000 {
            let owners = shards.filter { $0.owns(partitionKey: "Events", rowKey: "row-\(i)") }
            #expect(owners.count == 1)
            sizes[owners[0].index] += 1
        }
        #expect(sizes.allSatisfy { (850...1150).contains($0) }, "\(sizes)")
        // Fixed across runs and machines (FNV-1a): pinned, so a change that would reshuffle
        // every sharded deployment's parts fails here.
        #expect(StableHash.keys("Events", "row-1") == 0xbe6e_8787_810a_29a5)
    }

    @Test func eachShardGeneratesExactlyItsPartOfTheWhole() async throws {
        let desired = try GeneratedDataset.make(try Dataset.load(directory: TestSupport.speakeasy), options: TestSupport.options(events: 300))
        func keys(_ storage: DesiredStorage) async throws -> [String] {
            var out: [String] = []
            for group in storage.groups {
                var cursor = try group.entities()
                while let e = try await cursor.next() { out.append("\(e.partitionKey)|\(e.rowKey)|\(e.properties.count)") }
            }
            return out
        }
        let whole = try await keys(desired.storage)
        var parts: [String] = []
        for i in 0..<3 {
            let shard = Shard(index: i, count: 3)!
            let part = try await keys(desired.storage.sharded(shard))
            #expect(
                part.allSatisfy { line in
                    let p = line.split(separator: "|").map(String.init)
                    return shard.owns(partitionKey: p[0], rowKey: p[1])
                })
            parts += part
            #expect(desired.storage.sharded(shard).containers[0].blobs.allSatisfy { shard.owns(container: "speakers", blob: $0.name) })
        }
        #expect(parts.sorted() == whole.sorted())
        let blobs = (0..<3).flatMap { desired.storage.sharded(Shard(index: $0, count: 3)!).containers[0].blobs.map(\.name) }
        #expect(blobs.sorted() == desired.storage.containers[0].blobs.map(\.name).sorted())
    }
}
