import AzseedTestSupport
import AzureStorage
import EmbeddedEmulator
import Foundation
import SeedKit
import SeedRunner
import Synchronization
import Testing

/// The use cases as a Swift program runs them (the README's "Seeding from Swift"): a dataset
/// applied to the embedded storage, verified, reset, and a saved plan replayed — with the
/// observer hearing the plan before the first write.
@Suite struct SeederTests {
    static let speakeasy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Seeds/speakeasy")

    final class Recorder: RunObserver {
        let plans = Mutex<[Plan]>([])
        let notes = Mutex<[String]>([])
        func note(_ text: Phrase) { notes.withLock { $0.append(text.description) } }
        func planned(_ plan: Plan) async throws { plans.withLock { $0.append(plan) } }
    }

    @Test func theReadmeProgramAppliesVerifiesAndResets() async throws {
        let folder = try Scratch.folder("seeder")
        let target = RunTarget(location: .embedded(dataDirectory: folder.appendingPathComponent("storage"), provider: EmulatorEmbeddedStorage()))
        let recorder = Recorder()
        let seeder = Seeder(target: target, observer: recorder, tool: "SeederTests")
        let request = DatasetRequest(directory: Self.speakeasy, counts: ["event": 20], now: EdmDateTime(iso8601: "2026-11-21")!)

        let applied = try await seeder.apply(request, prune: false, concurrency: 8)
        #expect(applied.report.created == 1 + 8 + 1 + 8 + 20)
        #expect(recorder.plans.withLock { $0.count } == 1 && applied.servingNote?.settings.first == .emulatorCommand)
        #expect(recorder.notes.withLock { $0.contains { $0.hasPrefix("dataset speakeasy, seed 2012") } })

        // Without --now, the next run takes the recorded time: the same data.
        let again = DatasetRequest(directory: Self.speakeasy, counts: ["event": 20])
        #expect(try await seeder.verify(again, digests: false).plan.isEmpty)

        let (plan, report, _) = try await seeder.reset(again, dryRun: false, concurrency: 8)
        #expect(report?.deleted == plan.summary.delete && plan.summary.delete == 8 + 8 + 20)
        #expect(try await seeder.verify(again, digests: false).plan.summary.create == 8 + 8 + 20)
    }

    @Test func aSavedPlanIsCarriedOutOnlyIfNothingChanged() async throws {
        let folder = try Scratch.folder("seeder-saved")
        let target = RunTarget(location: .embedded(dataDirectory: folder.appendingPathComponent("storage"), provider: EmulatorEmbeddedStorage()))
        let seeder = Seeder(target: target)
        let request = DatasetRequest(directory: Self.speakeasy, counts: ["event": 5], now: EdmDateTime(iso8601: "2026-11-21")!)
        let plan = try await seeder.plan(request, prune: false, digests: true)
        let file = folder.appendingPathComponent("plan.json")
        try AtomicFile.write(file) { write in try plan.writeJSON { try write($0) } }

        let saved = try await seeder.loadSaved(file.path, chosenDataset: nil)
        #expect(try await seeder.apply(saved, concurrency: 4).report.created == plan.summary.create)
        // The target changed since: refused, nothing written.
        await #expect(throws: RunError.self) { _ = try await seeder.apply(saved, concurrency: 4) }
    }
}
