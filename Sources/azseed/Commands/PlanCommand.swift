import AzureStorage
import ArgumentParser
import Foundation
import SeedKit
import SeedRunner

/// `azseed plan`: the dry-run diff between the dataset and the target; writes nothing.
struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show what apply would change in the target (a dry run; writes nothing).",
        discussion: "Lines start with + (create), ~ (update), - (delete, only with --prune) or = (an existing entity recognised by its natural key)."
    )

    @OptionGroup var datasetOptions: DatasetOptions
    @OptionGroup var target: TargetOptions
    @OptionGroup var outputOptions: PlanOutputOptions

    @Flag(help: "Also plan deleting blobs and entities of the dataset's container and partitions that the dataset does not hold.")
    var prune = false

    func run() async throws {
        let plan = try await Planning.plan(datasetOptions, target: target, prune: prune, digests: outputOptions.writesJSON)
        try await outputOptions.finishDryRun(plan)
    }
}

/// Building a desired state and planning it against a target, shared by the commands.
enum Planning {
    /// Makes the desired state, opens the target and plans (closing the target after).
    static func plan(_ datasetOptions: DatasetOptions, target: TargetOptions, prune: Bool, digests: Bool) async throws -> Plan {
        let prepared = try desiredState(datasetOptions, target: target)
        return try await StorageSession.with(target) { session in
            try await plan(prepared, datasetOptions, in: session, prune: prune, digests: digests).plan
        }
    }

    /// Plans `prepared` at the target's reference time for its dataset (``ReferenceTime``):
    /// `--now`, else the one the target's ledger recorded, else the clock's. Says on stderr
    /// where it came from when that is not the clock, and the plan shows a move `--now` makes.
    static func plan(_ prepared: GeneratedDataset, _ datasetOptions: DatasetOptions, in session: StorageSession, prune: Bool,
                     digests: Bool) async throws -> (plan: Plan, reference: ReferenceTime) {
        let (desired, reference) = try await session.atReferenceTime(prepared, requested: datasetOptions.now != nil)
        if let note = reference.note { Console.note(note) }
        var plan = try await plan(desired, in: session, counts: try datasetOptions.parsedCounts(), access: datasetOptions.access, prune: prune, digests: digests)
        plan.header.nowMove = reference.move
        return (plan, reference)
    }

    /// The desired state, made and checked before anything touches storage, at `--now` or
    /// the clock (the target's ledger may choose another reference time once it is open).
    static func desiredState(_ datasetOptions: DatasetOptions, target: TargetOptions) throws -> GeneratedDataset {
        let dataset = try Dataset.load(directory: datasetOptions.datasetDirectory)
        return try GeneratedDataset.make(dataset, options: try datasetOptions.generationOptions(blobEndpoint: try target.blobEndpoint()))
    }

    static func plan(_ desired: GeneratedDataset, in session: StorageSession, counts: [String: Int], access: PublicAccess?, prune: Bool,
                     digests: Bool) async throws -> Plan {
        Console.note("dataset \(desired.dataset.name), seed \(desired.seed), window \(desired.window.from.shortISO8601) to \(desired.window.to.shortISO8601)")
        let bar = ProgressBar(label: "reading the target", activity: session.run.configuration.activity)
        defer { bar.finish() }
        return try await session.plan(desired, counts: counts, access: access, prune: prune, digests: digests) { bar.update(done: $0, total: nil) }
    }

    /// Observes and plans a snapshot, with a count of entities read on a terminal.
    static func plan(_ storage: DesiredStorage, header: PlanHeader, in session: StorageSession, digests: Bool) async throws -> Plan {
        let bar = ProgressBar(label: "reading the target", activity: session.run.configuration.activity)
        defer { bar.finish() }
        return try await session.run.plan(storage, header: header, digests: digests) { bar.update(done: $0, total: nil) }
    }
}
