import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import Testing

/// `--output json`'s result counts every entity left as it was (an attacker's note): those
/// recognised by their natural key under a foreign RowKey are in `unchangedEntities` too, so
/// the per-table counts add up to `changes.unchanged`.
@Suite struct ResultUnchangedTests {
    @Test func entitiesRecognisedByNaturalKeyAreCountedUnchanged() async throws {
        try await TestEmulator.withRunning { server in
            let target = RunTarget(location: .account(server.account))
            _ = try await Seeder(target: target).apply(UseCaseTests.request, prune: false, concurrency: 8)
            // A speaker moved under a RowKey of another tool's: recognised, not created again.
            let tables = TableClient(account: server.account)
            var speakers: [TableEntity] = []
            for try await page in tables.query("events", filter: .partition("speakers")) { speakers += page.map(\.entity) }
            var moved = try #require(speakers.first)
            try await tables.deleteEntity(partitionKey: moved.partitionKey, rowKey: moved.rowKey, from: "events")
            moved.rowKey = "foreign-1"
            _ = try await tables.insert(moved, into: "events")
            let plan = try await Seeder(target: target).plan(UseCaseTests.request, prune: false, digests: false)
            #expect(plan.entities.contains { $0.change == .unchanged && $0.desiredRowKey != nil })
            var result = RunResult(command: "plan", target: plan.header.target, shard: nil, seconds: 0, activity: RequestActivity())
            result.plan = plan
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(result.json().pretty().utf8)) as? [String: Any])
            let perTable = (json["unchangedEntities"] as? [String: Int] ?? [:]).values.reduce(0, +)
            let others = ["containers", "blobs", "tables"].reduce(0) { $0 + ((json[$1] as? [String: Int])?["unchanged"] ?? 0) }
            #expect(perTable + others == (json["changes"] as? [String: Int])?["unchanged"])
        }
    }
}
