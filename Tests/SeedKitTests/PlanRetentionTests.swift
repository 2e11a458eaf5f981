import AzureStorage
import Foundation
import PropertyBased
import Testing

@testable import SeedKit

/// A large plan printed as text holds only what it lists (``PlanRetention``): it must read as
/// the whole plan reads, count what the whole plan holds, and fingerprint the same actions in
/// the same order — what a streaming apply checks its second planning against.
@Suite struct PlanRetentionTests {
    /// SpeakEasy against a target that holds some of its entities, some changed, some under
    /// foreign RowKeys, and some the dataset does not hold, all chosen by `seed`.
    static func scenario(_ seed: Int) throws -> (GeneratedDataset, ObservedState, prune: Bool) {
        var random = SeedRandom(seed: UInt64(truncatingIfNeeded: seed))
        let desired = try PlannerTests.desired(events: 1 + Int(random.below(60)))
        var observed = try PlannerTests.seeded(desired)
        // In key order: a reported seed gives the same scenario in every process.
        for name in observed.tables.keys.sorted() {
            let table = observed.tables[name]!
            var drifted = ObservedTable()
            for partition in table.partitions.keys.sorted() {
                let rows = table.partitions[partition]!
                for rowKey in rows.keys.sorted() {
                    let entity = rows[rowKey]!
                    switch random.below(7) {
                    case 0: continue  // missing: created
                    case 1:
                        var changed = entity
                        changed["Note"] = .string("changed \(random.below(1000))")
                        changed.etag = "W/\"\(random.below(1_000_000))\""
                        drifted.add(changed)
                    case 2:
                        drifted.add(entity)
                        drifted.add(TableEntity(partitionKey: entity.partitionKey, rowKey: entity.rowKey + "-stray", properties: ["X": .int32(1)]))
                    case 3:
                        // Written by another tool under a foreign RowKey: recognised by its natural key.
                        var foreign = entity
                        foreign.rowKey = "foreign-\(random.below(1_000_000))"
                        drifted.add(foreign)
                    default: drifted.add(entity)
                    }
                }
            }
            observed.tables[name] = random.below(8) == 0 ? nil : drifted
        }
        return (desired, observed, random.below(2) == 0)
    }

    static func plan(_ desired: GeneratedDataset, _ observed: ObservedState, prune: Bool, _ retention: PlanRetention) async throws -> Plan {
        try await Planner.plan(
            desired: desired.storage, observed: observed, header: PlannerTests.header(desired, prune: prune), retention: retention)
    }

    @Test func aHeldPlanReadsCountsAndFingerprintsAsTheWholeOne() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int.max)) { seed in
            do {
                let (desired, observed, prune) = try Self.scenario(seed)
                var random = SeedRandom(seed: UInt64(truncatingIfNeeded: seed) &+ 1)
                let retention = PlanRetention(wholeUpTo: Int(random.below(40)), listLimit: Int(random.below(6)))
                let whole = try await Self.plan(desired, observed, prune: prune, .whole)
                let held = try await Self.plan(desired, observed, prune: prune, retention)
                let renderer = PlanTextRenderer(listLimit: retention.listLimit)
                #expect(renderer.render(held) == renderer.render(whole), "seed \(seed)")
                #expect(held.summary == whole.summary)
                #expect(held.fingerprints.values == whole.fingerprints.values)
                #expect(held.header == whole.header)
                #expect(whole.isWhole)
                // Held past the budget: at most listLimit creates (and deletes) of each kind.
                if !held.isWhole {
                    var listed: [String: Int] = [:]
                    for action in held.entities + held.entityDeletes where action.change != .update && action.desiredRowKey == nil {
                        listed["\(action.change) \(action.table) \(action.kind ?? "")", default: 0] += 1
                    }
                    #expect(listed.values.allSatisfy { $0 <= retention.listLimit }, "\(listed)")
                } else {
                    #expect(held.entities == whole.entities && held.entityDeletes == whole.entityDeletes)
                }
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    @Test func aLargePlanIsCountedNotHeld() async throws {
        // The shape of a large apply into an empty account: what is held is what is listed.
        let desired = try PlannerTests.desired(events: 25_000)
        let plan = try await Self.plan(desired, ObservedState(), prune: false, .text)
        let whole = try await Self.plan(desired, ObservedState(), prune: false, .whole)
        #expect(!plan.isWhole)
        #expect(plan.entities.count == 8 + PlanTextRenderer.defaultListLimit)  // the speakers, and the events listed
        #expect(plan.summary == whole.summary)
        #expect(plan.fingerprints.values.count == 25_008)
        #expect(PlanTextRenderer().render(plan) == PlanTextRenderer().render(whole))
    }

    /// From an attacker's review: a plan of few but large entities is held whole no longer
    /// than its bytes allow, and reads as the whole plan reads.
    @Test func aPlanOfFewLargeEntitiesIsCountedPastItsBytes() async throws {
        let desired = try PlannerTests.desired(events: 300)
        let byBytes = PlanRetention(wholeUpTo: 20_000, wholeBytes: 50_000, listLimit: PlanTextRenderer.defaultListLimit)
        let plan = try await Self.plan(desired, ObservedState(), prune: false, byBytes)
        let whole = try await Self.plan(desired, ObservedState(), prune: false, .whole)
        #expect(!plan.isWhole)
        #expect(plan.entities.count == 8 + PlanTextRenderer.defaultListLimit)
        #expect(plan.summary == whole.summary)
        #expect(PlanTextRenderer().render(plan) == PlanTextRenderer().render(whole))
        #expect(try await Self.plan(desired, ObservedState(), prune: false, .text).isWhole)  // 300 events are far below 32 MiB
    }

    /// A target that a second planning writes to as it goes, as a streaming apply does: a
    /// kind's pass reads the writes of the kinds before it (their partitions may be shared),
    /// never its own (they are behind its read).
    final class WrittenAsPlanned: ObservedEntitySource, @unchecked Sendable {
        var state: ObservedState
        var etag = 0
        init(_ state: ObservedState) { self.state = state }

        func pages(table: String, partitions: [String]) -> any ObservedEntityPages {
            PlanMergeTests.PagedSource(observed: state, size: 3).pages(table: table, partitions: partitions)
        }

        func write(_ action: EntityAction) {
            etag += 1
            switch action.change {
            case .create, .update:
                var entity = action.entity!
                entity.etag = "W/\"written-\(etag)\""
                state.tables[action.table]!.add(entity)
            case .delete:
                state.tables[action.table]!.partitions[ExactString(action.partitionKey)]![ExactString(action.rowKey)] = nil
            case .unchanged: break
            }
        }
    }

    /// Two kinds in one partition, each with entities missing, changed, under a foreign RowKey,
    /// and strays beside them: planned again while its actions are written, the plan gives the
    /// same actions in the same order (no false "someone else wrote"), whatever the drift.
    @Test func planningAgainWhileWritingGivesTheCountedActions() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SeedRandom(seed: UInt64(truncatingIfNeeded: seed))
            let a = (1...12).map { TableEntity(partitionKey: "p", rowKey: "a\($0)", properties: ["Name": .string("n\($0)")]) }
            let b = (1...9).map { TableEntity(partitionKey: "p", rowKey: "b\($0)", properties: ["Title": .string("t\($0)")]) }
            let desired = DesiredStorage(
                containers: [], tables: [OwnedTable(name: "t", partitions: ["p"])],
                groups: [PlanMergeTests.group("a", key: "Name", a), PlanMergeTests.group("b", key: "Title", b)])
            var table = ObservedTable()
            for (i, entity) in (a + b).enumerated() {
                var there = entity
                there.etag = "W/\"seeded-\(i)\""
                switch random.below(5) {
                case 0: continue
                case 1: there["Extra"] = .int32(1)
                case 2: there.rowKey = "zz-foreign-\(i)"
                default: break
                }
                table.add(there)
            }
            for i in 0..<Int(random.below(4)) { table.add(TableEntity(partitionKey: "p", rowKey: "stray-\(i)", properties: ["X": .int32(1)])) }
            let observed = ObservedState(tables: ["t": table])
            let prune = random.below(2) == 0
            let header = PlanHeader(
                target: PlanTarget(account: "a", blobEndpoint: "b", tableEndpoint: "t"), dataset: "d", datasetDirectory: "/d",
                seed: nil, window: nil, counts: [:], access: nil, prune: prune)
            do {
                let plan = try await Planner.plan(
                    desired: desired, observed: observed, entities: PlanMergeTests.PagedSource(observed: observed, size: 3), header: header,
                    retention: PlanRetention(wholeUpTo: 2, listLimit: 1))
                let target = WrittenAsPlanned(observed)
                var remade = ActionFingerprints()
                _ = try await Planner.remakeEntities(desired: desired, entities: target, prune: prune) { output in
                    switch output {
                    case .action(let action), .delete(let action):
                        remade.append(action)
                        target.write(action)
                    case .resolved(let actions):
                        for action in actions {
                            remade.append(action)
                            target.write(action)
                        }
                    case .kindEnded: break
                    }
                }
                #expect(remade.values == plan.fingerprints.values, "seed \(seed)")
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }
}
