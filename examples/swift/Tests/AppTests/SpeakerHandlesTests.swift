import App
import AzseedTesting
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import Testing

@Suite struct SpeakerHandlesTests {
    /// The dataset's YAML migrations (V1–V3), then the app's own in Swift (V4), on a seeded
    /// account; then undone, back to V3.
    @Test func theSwiftMigrationRunsAfterTheFilesAndIsUndoneExactly() async throws {
        try await withTestStorage { storage in
            try await storage.seed(dataset: SpeakerDirectoryTests.dataset, now: "2026-11-21")
            var migrator = Migrator(
                target: RunTarget(location: .account(storage.account)), folder: SpeakerDirectoryTests.dataset.appendingPathComponent("migrations"))
            migrator.code = [SpeakerHandles()]
            let applied = try await migrator.apply()
            #expect(applied.map(\.version) == ["1", "2", "3", "4"] && applied[3].operations.map(\.changes) == [8])
            var handles: [String] = []
            for try await page in storage.tables.query("events", filter: .partition("speakers")) {
                for entity in page { if case .string(let handle)? = entity.entity["Handle"] { handles.append(handle) } }
            }
            #expect(handles.count == 8 && handles.contains("@bert.johnson"))
            _ = try await migrator.undo(to: MigrationVersion("4")!)
            var left = 0
            for try await page in storage.tables.query("events", filter: .partition("speakers")) {
                left += page.filter { $0.entity["Handle"] != nil }.count
            }
            #expect(left == 0)
        }
    }
}
