import ArgumentParser
import Foundation
import SeedKit
import SeedRunner

/// `azseed verify`: does the target hold exactly the dataset?
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check that the target holds exactly the dataset: exit 0 on a match, 2 on drift (with the diff).",
        discussion:
            "Drift is anything apply --prune would change: missing or different blobs and entities, and entities or blobs in the dataset's container and partitions that the dataset does not hold."
    )

    @OptionGroup var datasetOptions: DatasetOptions
    @OptionGroup var target: TargetOptions

    @Option(
        help:
            "How to print: text (the drift as a diff) or json (one result document: matches, drift counts per kind and action, the drift itself, seconds, retries)."
    )
    var output: PlanOutputOptions.Format = .text

    func run() async throws {
        let target = try await self.target.resolve(readOnly: true)
        let observer = ConsoleObserver(target: target)
        let (plan, activity) = try await Seeder(target: target, observer: observer).verify(
            try datasetOptions.request(), digests: output == .json, retention: output == .json ? .whole : .text)
        observer.finish()
        if output == .json {
            var result = RunResult(
                command: "verify", target: plan.header.target, shard: plan.header.shard, seconds: Date().timeIntervalSince(Console.started),
                activity: activity)
            result.plan = plan
            result.extra = [("matches", .bool(plan.isEmpty)), ("drift", plan.json())]
            Console.print(result.json().pretty())
        }
        if plan.isEmpty {
            if output == .text {
                Console.print(
                    "Verified: \(plan.header.target.displayName) holds exactly dataset \(plan.header.dataset)\(plan.header.shard.map { ", shard \($0)," } ?? "") (\(plan.summary.unchanged) unchanged).\n"
                )
            }
            return
        }
        if output == .text {
            Console.print(PlanTextRenderer(colour: Console.colour, names: .flags).render(plan))
            let s = plan.summary
            let repair = s.delete > 0 ? "azseed apply --prune" : "azseed apply"
            Console.print("Drift: \(s.create) missing, \(s.update) different, \(s.delete) not in the dataset; '\(repair)' repairs it.\n")
        }
        throw ExitCode(2)
    }
}
