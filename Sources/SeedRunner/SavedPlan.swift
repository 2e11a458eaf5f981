import AzureStorage
import Foundation
import SeedKit

/// A plan saved with `azseed plan --out FILE`, ready to be made again: its header and the
/// dataset regenerated from the plan's own inputs (folder, seed, counts, window, access).
/// ``StorageSession/replan(_:)`` carries it out only if nothing changed since it was saved.
public struct SavedPlan: Sendable {
    public let file: String
    public let header: PlanHeader
    public let desired: GeneratedDataset

    /// Reads the plan in `file` and regenerates its dataset. `chosenDataset`: the folder the
    /// user named, refused when it is not the plan's. `blobEndpoint`: where generated blob
    /// URLs point (the target's).
    public static func load(_ file: String, chosenDataset: URL?, blobEndpoint: String) throws -> SavedPlan {
        let header = try PlanHeader.read(contentsOf: URL(fileURLWithPath: file))
        guard header.source == .dataset, let seed = header.seed, let window = header.window else {
            throw RunError("\(file): the plan was made by 'azseed import' from the snapshot \(header.datasetDirectory); run the import again instead")
        }
        if let chosenDataset, chosenDataset.standardizedFileURL.path != header.datasetDirectory {
            // Loaded only to name it in the message; the plan's own folder is loaded below.
            let dataset = try Dataset.load(directory: chosenDataset)
            throw RunError(
                "\(file): the plan is for dataset '\(header.dataset)' (\(header.datasetDirectory)), not '\(dataset.name)' (\(dataset.directory.standardizedFileURL.path)); make a plan for this dataset with \(Setting.savePlan)"
            )
        }
        let dataset = try Dataset.load(directory: URL(fileURLWithPath: header.datasetDirectory))
        guard dataset.name == header.dataset else {
            throw RunError("\(file): \(header.datasetDirectory) now holds dataset '\(dataset.name)', not '\(header.dataset)'; make a new plan")
        }
        // The reference time the ledger will record: one that gives the dataset a window, so a
        // later run without --now can make the same data from it.
        if let now = header.now, !now.isInAzureRange || (try? ResolvedWindow.resolve(dataset.window, now: now, from: nil, to: nil)) == nil {
            throw RunError(
                "\(file): its 'now' \(now.shortISO8601) gives dataset '\(dataset.name)' no window; the plan was edited — make a new plan with \(Setting.savePlan)"
            )
        }
        let options = GenerationOptions(
            seed: seed, counts: header.counts, now: header.now ?? window.from, from: window.from, to: window.to,
            access: header.access, blobEndpoint: blobEndpoint)
        return SavedPlan(file: file, header: header, desired: try GeneratedDataset.make(dataset, options: options))
    }
}

extension StorageSession {
    /// The saved plan made again against this target, refused (nothing written) when it was
    /// made for another target or when the dataset files or the target changed since.
    /// `migrations`: those the target has had (the saved plan was made over them too).
    public func replan(_ saved: SavedPlan, migrations: [Migration] = [], onRead: (@Sendable (Int) -> Void)? = nil) async throws -> Plan {
        try run.checkTarget(of: saved.header, file: saved.file)
        guard saved.header.shard == run.shard else {
            throw RunError(
                "\(saved.file): the plan was made for \(saved.header.shard.map { "shard \($0)" } ?? "the whole target"), not \(run.shard.map { "shard \($0)" } ?? "the whole target"); run \(Setting.applySavedPlan) with the plan's \(Setting.shard)"
            )
        }
        let fresh = try await plan(
            saved.desired, counts: saved.header.counts, access: saved.header.access, prune: saved.header.prune,
            digests: true, migrations: migrations, onRead: onRead)
        try SeedRun.checkUnchanged(saved: saved.header, fresh: fresh, file: saved.file)
        return fresh
    }
}
