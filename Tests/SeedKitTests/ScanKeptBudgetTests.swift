import AzureStorage
import Testing

@testable import SeedKit

/// Found by an attacker: partitions of at most 5,000 entities each keep every entity (rows and
/// references need them), so an account of many small partitions was held whole — 40 of 1,000
/// entities of 4 KB took 240 MB, one partition of 40,000 92 MB. The scan keeps whole entities
/// up to a budget; the partition that crosses it lets its own go and is inferred from its
/// statistics and sample, as a large one is.
@Suite struct ScanKeptBudgetTests {
    static func entity(_ partition: String, _ i: Int) -> TableEntity {
        var e = TableEntity(partitionKey: partition, rowKey: "r\(i)")
        e["Text"] = .string(String(repeating: "x", count: 4_000))
        e["N"] = .int32(Int32(i))
        return e
    }

    @Test func manySmallPartitionsKeepAtMostTheBudget() {
        let budget = 1 << 20
        var observations = PartitionObservations(sampleSize: 20, keepsKeys: true, keptBudget: budget)
        for p in 0..<40 {
            for i in 0..<100 { observations.observe(Self.entity("p\(p)", i), table: "things") }
            #expect(observations.keptBytes <= budget)
        }
        let all = observations.all().sorted { $0.partition.byteOrder($1.partition) < 0 }
        let keeping = all.filter { $0.entities != nil }
        // Those read first keep theirs, whole; the one that crossed the budget none; every count is right.
        #expect(!keeping.isEmpty && keeping.count < all.count)
        #expect(keeping.allSatisfy { $0.entities!.count == 100 })
        #expect(all.allSatisfy { $0.count == 100 })
        #expect(keeping.reduce(0) { $0 + $1.keptBytes } == observations.keptBytes)
        #expect(all.contains { $0.pastBudget })
    }

    @Test func aDatasetStillComesOfPartitionsPastTheBudget() {
        var observations = PartitionObservations(sampleSize: 20, keepsKeys: true, keptBudget: 100_000)
        for p in 0..<6 {
            for i in 0..<30 { observations.observe(Self.entity("p\(p)", i), table: "things") }
        }
        ScanRoundTripTests.scanLoadAndGenerate(observations.all(), copyValues: false, label: "past the budget")
        ScanRoundTripTests.scanLoadAndGenerate(observations.all(), copyValues: true, label: "past the budget, copied")
    }

    /// The same account's other half: each partition counted up to 1,000 distinct values of each
    /// column, whole — 40 partitions of a unique 4 KB text held 160 MB of them.
    @Test func distinctLongValuesAreCountedByTheirBytes() {
        var p = PropertyObservation()
        for i in 0..<1_000 { p.observe(.string(String(i) + String(repeating: "x", count: 4_000))) }
        #expect(p.distinctCount == nil)
        var words = PropertyObservation()
        for i in 0..<1_000 { words.observe(.string("word \(i % 900)")) }
        #expect(words.distinctCount == 900)
        var few = PropertyObservation()
        for i in 0..<1_000 { few.observe(.string(String(i % 3) + String(repeating: "y", count: 4_000))) }
        #expect(few.distinctCount == 3)
    }
}
