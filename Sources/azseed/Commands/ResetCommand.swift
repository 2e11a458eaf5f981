import ArgumentParser
import Foundation
import SeedKit
import SeedRunner

/// `azseed reset`: delete what the dataset owns.
struct ResetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Delete what the dataset owns: its blobs and every entity of its partitions (containers and tables stay).",
        discussion: "Against an endpoint that is not loopback, --yes is required."
    )

    @OptionGroup var datasetOptions: DatasetOptions
    @OptionGroup var target: TargetOptions

    @Flag(help: "Only show what would be deleted.")
    var dryRun = false

    @OptionGroup var execution: ExecutionOptions



    func run() async throws {
        if !dryRun { try Safety.confirmDeletes("reset", target: target, yes: execution.yes) }
        let desired = try Planning.desiredState(datasetOptions, target: target)
        try await StorageSession.with(target) { session in
            let header = session.run.header(for: desired, counts: try datasetOptions.parsedCounts(), access: datasetOptions.access, prune: true)
            let plan = try await session.run.resetPlan(desired.storage, header: header)
            Console.print(PlanTextRenderer(colour: Console.colour).render(plan))
            guard !dryRun, !plan.isEmpty else { return }
            let bar = ProgressBar(label: "deleting", activity: session.run.configuration.activity)
            let report = try await session.run.execute(plan, concurrency: execution.concurrency) { bar.update($0) }
            bar.finish()
            Console.print("Reset complete: \(report.deleted) deleted in \(String(format: "%.2f", report.seconds)) s.\n")
        }
    }
}
