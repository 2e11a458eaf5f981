import ArgumentParser
import Foundation
import SeedKit

/// `azseed verify`: does the target hold exactly the dataset?
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check that the target holds exactly the dataset: exit 0 on a match, 2 on drift (with the diff).",
        discussion: "Drift is anything apply --prune would change: missing or different blobs and entities, and entities or blobs in the dataset's container and partitions that the dataset does not hold."
    )

    @OptionGroup var datasetOptions: DatasetOptions
    @OptionGroup var target: TargetOptions

    @Option(help: "How to print drift: text (a diff) or json.")
    var output: PlanOutputOptions.Format = .text

    func run() async throws {
        let plan = try await Planning.plan(datasetOptions, target: target, prune: true, digests: output == .json)
        if output == .json { Console.print(plan.json().pretty()) }
        if plan.isEmpty {
            if output == .text { Console.print("Verified: \(plan.header.target.displayName) holds exactly dataset \(plan.header.dataset)\(plan.header.shard.map { ", shard \($0)," } ?? "") (\(plan.summary.unchanged) unchanged).\n") }
            return
        }
        if output == .text {
            Console.print(PlanTextRenderer(colour: Console.colour).render(plan))
            let s = plan.summary
            let repair = s.delete > 0 ? "azseed apply --prune" : "azseed apply"
            Console.print("Drift: \(s.create) missing, \(s.update) different, \(s.delete) not in the dataset; '\(repair)' repairs it.\n")
        }
        throw ExitCode(2)
    }
}
