import AzseedTestSupport
import AzureStorage
import Crypto
import Foundation
import Testing

@testable import SeedKit

/// Paths and helpers shared by the SeedKit tests.
enum TestSupport {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let speakeasy = repositoryRoot.appendingPathComponent("Seeds/speakeasy")
    static let chat = repositoryRoot.appendingPathComponent("Seeds/chat")
    static let azseed = BuiltProducts.azseed

    /// Copies the SpeakEasy dataset and its templates into a temporary folder so a test can
    /// change one thing; returns the dataset folder.
    static func copyOfSpeakEasy() throws -> URL {
        let root = try Scratch.folder()
        let fm = FileManager.default
        try fm.createDirectory(at: root.appendingPathComponent("Seeds"), withIntermediateDirectories: true)
        try fm.copyItem(at: speakeasy, to: root.appendingPathComponent("Seeds/speakeasy"))
        return root.appendingPathComponent("Seeds/speakeasy")
    }

    /// Rewrites a file of a dataset copy.
    static func edit(_ file: URL, _ change: (String) -> String) throws {
        let text = try String(contentsOf: file, encoding: .utf8)
        try change(text).write(to: file, atomically: true, encoding: .utf8)
    }

    /// The error loading and generating a copy of SpeakEasy gives once `prepare` ran on the
    /// folder and `change` on its dataset.yaml; "no error" when there is none.
    static func loadError(_ prepare: (URL) throws -> Void = { _ in }, _ change: (String) -> String) throws -> String {
        let copy = try copyOfSpeakEasy()
        try prepare(copy)
        try edit(copy.appendingPathComponent("dataset.yaml"), change)
        do {
            let dataset = try Dataset.load(directory: copy)
            _ = try GeneratedDataset.make(dataset, options: options())
        } catch let error as DatasetError {
            return error.description
        } catch let error as GenerationError {
            return error.message.description
        }
        return "no error"
    }

    static let pinnedWindow = (from: EdmDateTime(iso8601: "2026-01-01")!, to: EdmDateTime(iso8601: "2026-07-01")!)

    static func options(seed: UInt64 = 42, events: Int? = nil) -> GenerationOptions {
        GenerationOptions(
            seed: seed, counts: events.map { ["event": $0] } ?? [:], now: EdmDateTime(iso8601: "2026-11-21")!,
            from: pinnedWindow.from, to: pinnedWindow.to)
    }

    /// Each edit of `yaml` — `from` replaced by `to` — is refused by `make` with an error
    /// naming `expected`; an edit that changes nothing is itself a failure.
    static func expectRefused(
        _ yaml: String, _ cases: [(from: String, to: String, expected: String)], make: (String) throws -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (from, to, expected) in cases {
            let edited = yaml.replacingOccurrences(of: from, with: to)
            #expect(edited != yaml, "the edit of '\(from)' changes nothing", sourceLocation: sourceLocation)
            do {
                try make(edited)
                Issue.record("accepted: \(to)", sourceLocation: sourceLocation)
            } catch {
                #expect("\(error)".contains(expected), "\(to): \(error)", sourceLocation: sourceLocation)
            }
        }
    }

    /// Every entity of a table.
    static func entities(_ table: DesiredTable) throws -> [GeneratedEntity] {
        var out: [GeneratedEntity] = []
        try table.forEachEntity { out.append($0) }
        return out
    }
}

extension GeneratedEntity {
    subscript(name: String) -> EdmValue? {
        names.firstIndex(of: name).map { values[$0] }
    }
}
