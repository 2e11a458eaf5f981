import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import StorageEmulator
import Testing

/// The account-to-account use cases from Swift, against in-process emulators: export then
/// import gives the same snapshot back, copy makes a second account hold the first's data, and
/// scan writes a dataset that loads. (The Python suite drives the same through the CLI.)
@Suite struct UseCaseTests {
    static let speakeasy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Seeds/speakeasy")
    static let request = DatasetRequest(directory: speakeasy, counts: ["event": 12], now: EdmDateTime(iso8601: "2026-11-21")!)

    /// Two running emulators, the first seeded with SpeakEasy.
    static func withSeededPair(_ body: (RunTarget, RunTarget) async throws -> Void) async throws {
        try await TestEmulator.withRunning { source in
            try await TestEmulator.withRunning { target in
                let from = RunTarget(location: .account(source.account))
                _ = try await Seeder(target: from).apply(request, prune: false, concurrency: 8)
                try await body(from, RunTarget(location: .account(target.account)))
            }
        }
    }

    @Test func exportThenImportGivesTheSameSnapshotBack() async throws {
        try await Self.withSeededPair { source, target in
            let folder = try Scratch.folder("use-cases")
            let first = folder.appendingPathComponent("first")
            let second = folder.appendingPathComponent("second")
            let storage = folder.appendingPathComponent("storage")
            let exported = try await exportSnapshot(
                ExportRequest(containers: [], tables: [], dataset: Self.speakeasy, storageFolder: storage, out: first, force: false), from: source)
            #expect(exported.summary.blobs == 8 && exported.summary.entities.map(\.count) == [8 + 12])

            let imported = try await importSnapshot(
                try await readSnapshot(first, for: target), into: target, prune: false, dryRun: false, concurrency: 8, digests: false)
            #expect(imported.report.created == 1 + 8 + 1 + 8 + 12)
            _ = try await exportSnapshot(
                ExportRequest(containers: [], tables: [], dataset: Self.speakeasy, storageFolder: storage, out: second, force: false), from: target)
            // The same entities and blobs (the manifests differ only in the account they name).
            #expect(try Folders.hash(first.appendingPathComponent("tables")) == Folders.hash(second.appendingPathComponent("tables")))
            #expect(try Folders.hash(first.appendingPathComponent("blobs")) == Folders.hash(second.appendingPathComponent("blobs")))
            let again = try await importSnapshot(
                try await readSnapshot(first, for: target), into: target, prune: false, dryRun: true, concurrency: 8, digests: false)
            #expect(again.plan.isEmpty)
        }
    }

    @Test func copyMakesTheTargetHoldTheSourceAndRefusesTheSameAccount() async throws {
        try await Self.withSeededPair { source, target in
            let sourceAccount = try #require(source.account)
            let copied = try await copyAccount(
                from: sourceAccount, containers: ["speakers"], tables: ["events"], to: target, prune: false, dryRun: false, concurrency: 8,
                digests: false)
            #expect(copied.report.created == 1 + 8 + 1 + 8 + 12)
            let again = try await copyAccount(
                from: sourceAccount, containers: ["speakers"], tables: ["events"], to: target, prune: true, dryRun: true, concurrency: 8,
                digests: false)
            #expect(again.plan.isEmpty)
            await #expect(throws: SameAccountError.self) {
                _ = try await copyAccount(
                    from: sourceAccount, containers: [], tables: [], to: source, prune: false, dryRun: true, concurrency: 8, digests: false)
            }
        }
    }

    @Test func scanWritesADatasetThatLoads() async throws {
        try await Self.withSeededPair { source, _ in
            let folder = try Scratch.folder("use-cases-scan")
            let report = try await scanAccount(
                ScanOptions(containers: nil, tables: nil, sample: 5, copyBlobs: false, name: "scanned"), of: source,
                storageFolder: folder.appendingPathComponent("storage"), into: folder.appendingPathComponent("scanned"))
            #expect(report.tables == 1 && report.entities == 8 + 12)  // the ledger table is not the account's data
            let dataset = try Dataset.load(directory: folder.appendingPathComponent("scanned"))
            #expect(dataset.name == "scanned" && dataset.tables.map(\.name) == ["events"])
        }
    }
}
