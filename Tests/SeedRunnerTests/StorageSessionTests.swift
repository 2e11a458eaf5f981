import AzseedTestSupport
import AzureStorage
import EmbeddedEmulator
import Foundation
import SeedKit
import SeedRunner
import Testing

/// What the CLI does, done from Swift through SeedRunner: the embedded storage opened in a
/// folder, a dataset planned and applied, a saved plan replayed — and refused once the
/// target changed.
@Suite struct StorageSessionTests {
    static let speakeasy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Seeds/speakeasy")

    @Test func aSwiftProgramSeedsTheEmbeddedStorageAndReplaysASavedPlan() async throws {
        let folder = try Scratch.folder("session")
        let desired = try GeneratedDataset.make(
            try Dataset.load(directory: Self.speakeasy),
            options: GenerationOptions(counts: ["event": 20], now: EdmDateTime(iso8601: "2026-11-21")!))
        try await StorageSession.with(
            .embedded(dataDirectory: folder.appendingPathComponent("storage"), provider: EmulatorEmbeddedStorage()), command: "StorageSessionTests"
        ) { session in
            #expect(session.servesHere && session.servingNote?.settings.first == .emulatorCommand)
            let plan = try await session.plan(desired, counts: ["event": 20], access: nil, prune: false, digests: true)
            #expect(plan.summary.create == 1 + 8 + 1 + 8 + 20)

            // Saved before anything is written, then replayed: the same plan again.
            let file = folder.appendingPathComponent("plan.json")
            var bytes: [UInt8] = []
            plan.writeJSON { bytes += $0 }
            try Data(bytes).write(to: file)
            let saved = try SavedPlan.load(file.path, chosenDataset: nil, blobEndpoint: GenerationOptions.developmentBlobEndpoint)
            let again = try await session.replan(saved)
            #expect(again == plan)

            let report = try await session.run.execute(again, concurrency: 4)
            #expect(report.created == plan.summary.create)
            #expect(try await session.plan(desired, counts: ["event": 20], access: nil, prune: false, digests: false).isEmpty)

            // The target changed since the plan was saved: refused, nothing written.
            await #expect(throws: RunError.self) { _ = try await session.replan(saved) }
        }
    }
}
