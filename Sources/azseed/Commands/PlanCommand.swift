import ArgumentParser
import AzureStorage
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
        try await outputOptions.finishDryRun(
            try await Planning.plan(
                datasetOptions, target: try await target.resolve(readOnly: true), prune: prune,
                digests: outputOptions.writesJSON, retention: outputOptions.retention()))
    }
}

/// Planning a dataset, with the entities read counted on a terminal.
enum Planning {
    static func plan(
        _ datasetOptions: DatasetOptions, target: RunTarget, prune: Bool, digests: Bool, retention: PlanRetention = .whole
    ) async throws -> Plan {
        let observer = ConsoleObserver(target: target)
        defer { observer.finish() }
        return try await Seeder(target: target, observer: observer).plan(
            try datasetOptions.request(), prune: prune, digests: digests, retention: retention)
    }
}
