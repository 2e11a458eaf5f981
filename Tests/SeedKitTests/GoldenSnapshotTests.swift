import AzseedTestSupport
import Foundation
import Testing

@testable import SeedKit

/// The determinism contract: same dataset files, seed and window ⇒ the same bytes.
@Suite struct GoldenSnapshotTests {
    /// Pinned: seed 42, window [2026-01-01, 2026-07-01). If this changes, every user's
    /// fixtures change: only ever update it deliberately, with a note in the changelog.

    @Test func speakEasySnapshotIsPinned() throws {
        let out = try Scratch.folder().appendingPathComponent("fixture")
        let dataset = try Dataset.load(directory: TestSupport.speakeasy)
        _ = try SnapshotWriter.write(try GeneratedDataset.make(dataset, options: TestSupport.options()), to: out, force: false)
        #expect(try Folders.hash(out) == Folders.speakEasySeed42)
    }

    @Test func twoRunsWriteTheSameBytes() throws {
        let dataset = try Dataset.load(directory: TestSupport.chat)
        let a = try Scratch.folder().appendingPathComponent("a")
        let b = try Scratch.folder().appendingPathComponent("b")
        let options = TestSupport.options(seed: 9)
        _ = try SnapshotWriter.write(try GeneratedDataset.make(dataset, options: options), to: a, force: false)
        _ = try SnapshotWriter.write(try GeneratedDataset.make(dataset, options: options), to: b, force: false)
        #expect(try Folders.hash(a) == Folders.hash(b))
    }

    @Test func anotherSeedChangesTheEvents() throws {
        let dataset = try Dataset.load(directory: TestSupport.speakeasy)
        let a = try TestSupport.entities(try GeneratedDataset.make(dataset, options: TestSupport.options(seed: 1)).tables[0])
        let b = try TestSupport.entities(try GeneratedDataset.make(dataset, options: TestSupport.options(seed: 2)).tables[0])
        #expect(a.map(\.rowKey) != b.map(\.rowKey))
        // Speakers are rows: their keys do not depend on the seed.
        #expect(a.filter { $0.partitionKey == "speakers" }.map(\.rowKey) == b.filter { $0.partitionKey == "speakers" }.map(\.rowKey))
    }
}
