import AzureStorage
import Foundation
import Testing

@testable import SeedKit

/// The planner's merge of desired and observed entity streams: the same plan whatever the
/// page sizes, refusal of pages out of byte order, and kinds that share a partition.
@Suite struct PlanMergeTests {
    /// Serves a table's entities in pages of `size`, in byte order, with entities of a
    /// partition nobody owns interleaved (the whole-table query of a many-partition table).
    struct PagedSource: ObservedEntitySource {
        var observed: ObservedState
        var size: Int
        var swapFirstTwo = false

        func pages(table: String, partitions: [String]) -> any ObservedEntityPages {
            var all: [TableEntity] = []
            for (partition, rows) in observed.tables[table]?.partitions ?? [:] {
                for (_, entity) in rows where partitions.contains(where: { $0.isExactly(partition.string) }) || partition.string == "aaa-unowned" {
                    all.append(entity)
                }
            }
            all.sort { EntityMerge.order($0, $1) < 0 }
            if swapFirstTwo, all.count > 1 { all.swapAt(0, 1) }
            return HeldPages(pages: stride(from: 0, to: all.count, by: size).map { Array(all[$0..<min($0 + size, all.count)]) })
        }
    }

    struct ArrayCursor: EntityCursor {
        var entities: [TableEntity]
        var position = 0
        mutating func next() -> TableEntity? {
            defer { position += 1 }
            return position < entities.count ? entities[position] : nil
        }
    }

    static func group(_ kind: String, key: String, _ entities: [TableEntity]) -> EntityGroup {
        let sorted = entities.sorted { EntityMerge.order($0, $1) < 0 }
        return EntityGroup(
            table: "t", kind: kind, partitions: ["p"], key: [key], rowKeyReferences: [],
            makeCursor: { ArrayCursor(entities: sorted) },
            rowKeys: { ["p": Set(sorted.map { ExactString($0.rowKey) })] })
    }

    static func summary(_ plan: Plan) -> [String] {
        (plan.entities + plan.entityDeletes).map {
            "\($0.change) \($0.kind ?? "-") \($0.partitionKey)/\($0.rowKey) \($0.desiredRowKey ?? "") \($0.changes.map(\.name))"
        }
    }

    @Test func pagesOfAnySizeGiveTheSamePlanAsTheWholeState() async throws {
        let desired = try PlannerTests.desired()
        var observed = try PlannerTests.seeded(desired)
        let events = observed.tables["events"]!.partitions["Events"]!
        var changed = events[events.keys.sorted()[5]]!
        changed["EventName"] = .string("Renamed")
        observed.tables["events"]!.add(changed)
        observed.tables["events"]!.add(TableEntity(partitionKey: "Events", rowKey: "stray"))
        observed.tables["events"]!.add(TableEntity(partitionKey: "aaa-unowned", rowKey: "x"))
        // One speaker under a foreign RowKey: recognised by its natural key.
        let speakers = observed.tables["events"]!.partitions["speakers"]!
        var moved = speakers[speakers.keys.sorted()[2]]!
        observed.tables["events"]!.partitions["speakers"]![ExactString(moved.rowKey)] = nil
        moved.rowKey = "0-foreign"
        observed.tables["events"]!.add(moved)

        for prune in [false, true] {
            let header = PlannerTests.header(desired, prune: prune)
            let whole = try await Planner.plan(desired: desired.storage, observed: observed, header: header)
            // The renamed event, and the events naming the moved speaker (now under its RowKey).
            #expect(whole.summary.create == 0 && whole.summary.update > 1 && whole.summary.delete == (prune ? 1 : 0))
            #expect(whole.entities.contains { $0.desiredRowKey != nil && $0.rowKey == "0-foreign" })
            for size in [1, 3, 1000] {
                let paged = try await Planner.plan(
                    desired: desired.storage, observed: observed, entities: PagedSource(observed: observed, size: size), header: header)
                #expect(paged == whole)
            }
            var owned = observed
            owned.tables["events"]!.partitions["aaa-unowned"] = nil  // never observed: not the dataset's
            #expect(whole.header.observedDigest == Planner.observedDigest(owned))
        }
    }

    @Test func pagesOutOfByteOrderAreRefusedForTheMerge() async throws {
        let desired = try PlannerTests.desired()
        let observed = try PlannerTests.seeded(desired)
        await #expect(throws: ObservedOrderError.self) {
            _ = try await Planner.plan(
                desired: desired.storage, observed: observed,
                entities: PagedSource(observed: observed, size: 4, swapFirstTwo: true), header: PlannerTests.header(desired))
        }
    }

    /// Two kinds in one partition: each pass leaves the other kind's entities alone, an
    /// entity under a foreign RowKey is recognised once, and only what neither holds is
    /// left over.
    @Test func kindsSharingAPartitionEachMatchTheirOwn() async throws {
        let a = (1...4).map { TableEntity(partitionKey: "p", rowKey: "a\($0)", properties: ["Name": .string("n\($0)")]) }
        let b = (1...3).map { TableEntity(partitionKey: "p", rowKey: "b\($0)", properties: ["Title": .string("t\($0)")]) }
        let desired = DesiredStorage(
            containers: [], tables: [OwnedTable(name: "t", partitions: ["p"])],
            groups: [Self.group("a", key: "Name", a), Self.group("b", key: "Title", b)])
        var table = ObservedTable()
        for entity in a.dropFirst() + b { table.add(entity) }
        var foreign = a[0]
        foreign.rowKey = "zz-foreign"
        table.add(foreign)
        table.add(TableEntity(partitionKey: "p", rowKey: "stray", properties: ["Name": .string("other")]))
        let observed = ObservedState(tables: ["t": table])
        let header = PlanHeader(
            target: PlanTarget(account: "a", blobEndpoint: "b", tableEndpoint: "t"), dataset: "d", datasetDirectory: "/d",
            seed: nil, window: nil, counts: [:], access: nil, prune: true)
        for source in [PagedSource(observed: observed, size: 2), PagedSource(observed: observed, size: 100)] {
            let plan = try await Planner.plan(desired: desired, observed: observed, entities: source, header: header)
            #expect(Self.summary(plan) == ["unchanged a p/zz-foreign a1 []", "delete - p/stray  []"])
            #expect(plan.unchangedEntities == ["t": 6])
        }
    }
}
