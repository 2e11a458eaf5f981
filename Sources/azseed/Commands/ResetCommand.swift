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

    @Option(help: "How to print: text (what is deleted, then a summary) or json (one result document: deletes per kind, seconds, retries).")
    var output: PlanOutputOptions.Format = .text

    func run() async throws {
        if !dryRun { try Safety.confirmDeletes("reset", target: target, yes: execution.yes) }
        let desired = try Planning.desiredState(datasetOptions, target: target)
        try await StorageSession.with(target) { session in
            let header = session.run.header(for: desired, counts: try datasetOptions.parsedCounts(), access: datasetOptions.access, prune: true)
            let plan = try await session.run.resetPlan(desired.storage, header: header)
            if output == .text { Console.print(PlanTextRenderer(colour: Console.colour).render(plan)) }
            var report: ExecutionReport?
            if !dryRun, !plan.isEmpty {
                let bar = ProgressBar(label: "deleting", activity: session.run.configuration.activity)
                let done = try await session.run.execute(plan, concurrency: execution.concurrency) { bar.update($0) }
                bar.finish()
                report = done
                if output == .text { Console.print("Reset complete: \(done.deleted) deleted in \(String(format: "%.2f", done.seconds)) s.\n") }
            }
            if output == .json {
                var result = RunResult(command: "reset", target: plan.header.target, shard: plan.header.shard, seconds: Date().timeIntervalSince(Console.started),
                                       activity: session.run.configuration.activity)
                result.plan = plan
                result.report = report ?? ExecutionReport()
                result.extra = [("dryRun", .bool(dryRun))]
                Console.print(result.json().pretty())
            }
        }
    }
}
