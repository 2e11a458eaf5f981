import App
import AzseedTesting
import Foundation
import Testing

@Suite struct SpeakerDirectoryTests {
    /// The SpeakEasy dataset shipped with azseed (use your own dataset folder).
    static let dataset = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("../../Seeds/speakeasy").standardizedFileURL

    @Test func listsEverySpeakerOnce() async throws {
        try await withTestStorage { storage in
            try await storage.seed(dataset: Self.dataset, now: "2026-11-21")
            let names = try await SpeakerDirectory(tables: storage.tables).names()
            #expect(names.count == 8 && names.contains("Bert Johnson"))
        }
    }

    @Test func anEmptyAccountHasNoSpeakers() async throws {
        try await withTestStorage { storage in
            try await storage.tables.createTable("events")
            #expect(try await SpeakerDirectory(tables: storage.tables).names().isEmpty)
        }
    }
}
