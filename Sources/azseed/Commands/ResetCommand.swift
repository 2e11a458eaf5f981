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
        let target = try await self.target.resolve(readOnly: dryRun)
        if !dryRun { try Safety.confirmDeletes("reset", target: target, yes: execution.yes) }
        let format = output
        let observer = ConsoleObserver(target: target, writingLabel: "deleting") { plan in
            if format == .text {
                var renderer = PlanTextRenderer(colour: Console.colour, names: .flags)
                renderer.reset = true
                Console.print(renderer.render(plan))
            }
        }
        let (plan, report, activity) = try await Seeder(target: target, observer: observer).reset(
            try datasetOptions.request(), dryRun: dryRun,
            concurrency: execution.concurrency)
        observer.finish()
        if let report, output == .text {
            Console.print("Reset complete: \(report.deleted) deleted in \(String(format: "%.2f", report.seconds)) s.\n")
        }
        if output == .json {
            var result = RunResult(
                command: "reset", target: plan.header.target, shard: plan.header.shard, seconds: Date().timeIntervalSince(Console.started),
                activity: activity)
            result.plan = plan
            result.report = report ?? ExecutionReport()
            result.extra = [("dryRun", .bool(dryRun))]
            Console.print(result.json().pretty())
        }
    }
}
