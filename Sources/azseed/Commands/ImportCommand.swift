import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// `azseed import DIR`: a snapshot becomes the desired state, planned and applied like a dataset.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Make the target hold a snapshot (from 'azseed export' or 'azseed generate'): plan, then apply.",
        discussion: "Every file is checked against the manifest first; a changed or truncated snapshot is refused before anything is written."
    )

    @Argument(help: ArgumentHelp("The snapshot folder.", valueName: "dir"))
    var snapshot: String

    @OptionGroup var target: TargetOptions
    @OptionGroup var outputOptions: PlanOutputOptions

    @Flag(help: "Only show the plan.")
    var dryRun = false

    @Flag(help: "Also delete blobs and entities of the snapshot's containers and partitions that it does not hold.")
    var prune = false

    @OptionGroup var execution: ExecutionOptions

    func run() async throws {
        let target = try await self.target.resolve(readOnly: dryRun)
        // A damaged snapshot is refused before asking to confirm deletes it would make.
        let read = try await readSnapshot(URL(fileURLWithPath: snapshot), for: target)
        if prune && !dryRun { try Safety.confirmDeletes("--prune", target: target, yes: execution.yes) }
        let applied = try await Transfer.run(target, outputOptions, dryRun: dryRun) { observer in
            try await importSnapshot(
                read, into: target, prune: prune, dryRun: dryRun, concurrency: execution.concurrency,
                digests: outputOptions.writesJSON, observer: observer)
        }
        if let applied { try Applying.report(applied, output: outputOptions, command: "import") }
    }
}
