import Foundation
import Testing
@testable import SeedKit

/// The determinism contract: same dataset files, seed and window ⇒ the same bytes.
@Suite struct GoldenSnapshotTests {
    /// Pinned: seed 42, window [2026-01-01, 2026-07-01). If this changes, every user's
    /// fixtures change: only ever update it deliberately, with a note in the changelog.
    static let speakEasySeed42 = "6dbc2f65aeced8bc77b08329eaf8f96429617ee913f7046982af4d74d8fe3ba4"

    @Test func speakEasySnapshotIsPinned() throws {
        let out = try TestSupport.temporaryDirectory().appendingPathComponent("fixture")
        let dataset = try Dataset.load(directory: TestSupport.speakeasy)
        _ = try SnapshotWriter.write(try GeneratedDataset.make(dataset, options: TestSupport.options()), to: out, force: false)
        #expect(try TestSupport.folderHash(out) == Self.speakEasySeed42)
    }

    @Test func twoRunsWriteTheSameBytes() throws {
        let dataset = try Dataset.load(directory: TestSupport.chat)
        let a = try TestSupport.temporaryDirectory().appendingPathComponent("a")
        let b = try TestSupport.temporaryDirectory().appendingPathComponent("b")
        let options = TestSupport.options(seed: 9)
        _ = try SnapshotWriter.write(try GeneratedDataset.make(dataset, options: options), to: a, force: false)
        _ = try SnapshotWriter.write(try GeneratedDataset.make(dataset, options: options), to: b, force: false)
        #expect(try TestSupport.folderHash(a) == TestSupport.folderHash(b))
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
