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
        for (name, table) in observed.tables {
            var drifted = ObservedTable()
            for (_, rows) in table.partitions {
                for (_, entity) in rows {
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
}
