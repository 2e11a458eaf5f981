import AzureStorage
import Crypto
import Foundation
@testable import SeedKit

/// Paths and helpers shared by the SeedKit tests.
enum TestSupport {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let speakeasy = repositoryRoot.appendingPathComponent("Seeds/speakeasy")
    static let chat = repositoryRoot.appendingPathComponent("Seeds/chat")
    static let azseed = repositoryRoot.appendingPathComponent(".build/debug/azseed")

    /// A fresh empty folder under the system temporary folder.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("azseed-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// SHA-256 over every file of a folder: sorted relative paths, each followed by its bytes.
    static func folderHash(_ folder: URL) throws -> String {
        let base = folder.standardizedFileURL.path
        var paths: [String] = []
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])!
        for case let url as URL in walker where (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true {
            paths.append(String(url.standardizedFileURL.path.dropFirst(base.count + 1)))
        }
        var hasher = SHA256()
        for path in paths.sorted() {
            hasher.update(data: Data(path.utf8))
            hasher.update(data: Data([0]))
            hasher.update(data: try Data(contentsOf: folder.appendingPathComponent(path)))
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// Copies the SpeakEasy dataset and its templates into a temporary folder so a test can
    /// change one thing; returns the dataset folder.
    static func copyOfSpeakEasy() throws -> URL {
        let root = try temporaryDirectory()
        let fm = FileManager.default
        try fm.createDirectory(at: root.appendingPathComponent("Seeds"), withIntermediateDirectories: true)
        try fm.createDirectory(at: root.appendingPathComponent("Templates"), withIntermediateDirectories: true)
        try fm.copyItem(at: speakeasy, to: root.appendingPathComponent("Seeds/speakeasy"))
        try fm.copyItem(at: repositoryRoot.appendingPathComponent("Templates/speakeasy"), to: root.appendingPathComponent("Templates/speakeasy"))
        return root.appendingPathComponent("Seeds/speakeasy")
    }

    /// Rewrites a file of a dataset copy.
    static func edit(_ file: URL, _ change: (String) -> String) throws {
        let text = try String(contentsOf: file, encoding: .utf8)
        try change(text).write(to: file, atomically: true, encoding: .utf8)
    }

    static let pinnedWindow = (from: EdmDateTime(iso8601: "2026-01-01")!, to: EdmDateTime(iso8601: "2026-07-01")!)

    static func options(seed: UInt64 = 42, events: Int? = nil) -> GenerationOptions {
        GenerationOptions(seed: seed, counts: events.map { ["event": $0] } ?? [:], now: EdmDateTime(iso8601: "2026-11-21")!,
                          from: pinnedWindow.from, to: pinnedWindow.to)
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
