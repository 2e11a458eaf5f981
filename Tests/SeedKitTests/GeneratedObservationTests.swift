import AzureStorage
import Testing

@testable import SeedKit

/// The fidelity report observes generated entities as they are made (names and values side by
/// side) instead of as `TableEntity`s: the statistics must be the same either way.
@Suite struct GeneratedObservationTests {
    @Test func aGeneratedEntityIsObservedAsItsTableEntityIs() throws {
        let dataset = try Dataset.load(directory: TestSupport.speakeasy)
        let made = try GeneratedDataset.make(dataset, options: TestSupport.options(events: 3_000))
        var direct = PartitionObservations(sampleSize: 0, keepsKeys: false)
        var viaTableEntity = PartitionObservations(sampleSize: 0, keepsKeys: false)
        var entities = 0
        for table in made.tables {
            try table.forEachEntity { entity in
                entities += 1
                direct.observe(entity, table: table.name)
                viaTableEntity.observe(entity.tableEntity, table: table.name)
            }
        }
        #expect(entities > 3_000)
        let a = direct.all().sorted { ($0.table, $0.partition) < ($1.table, $1.partition) }
        let b = viaTableEntity.all().sorted { ($0.table, $0.partition) < ($1.table, $1.partition) }
        #expect(a.map(\.count) == b.map(\.count))
        for (x, y) in zip(a, b) {
            #expect(x.propertyNames == y.propertyNames)
            for name in x.propertyNames {
                let p = x.property(name)!
                let q = y.property(name)!
                #expect(p.present == q.present && p.typeCounts == q.typeCounts && p.distinctCount == q.distinctCount, "\(name)")
                #expect(p.minInt == q.minInt && p.maxInt == q.maxInt && p.minTicks == q.minTicks && p.maxTicks == q.maxTicks, "\(name)")
                #expect(p.maxLength == q.maxLength && p.allDistinct == q.allDistinct && p.points.map(\.value) == q.points.map(\.value), "\(name)")
            }
        }
    }
}
