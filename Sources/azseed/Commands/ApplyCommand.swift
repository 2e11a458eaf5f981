import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// `azseed apply`: plan, then carry the plan out.
struct ApplyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Make the target hold the dataset: plan, then create, update (and with --prune delete) what differs.",
        discussion: "Re-running converges: what already matches is left alone, so an interrupted apply is finished by running it again."
    )

    @OptionGroup var datasetOptions: DatasetOptions
    @OptionGroup var target: TargetOptions
    @OptionGroup var outputOptions: PlanOutputOptions

    @Flag(help: "Only show the plan (the same as 'azseed plan').")
    var dryRun = false

    @Option(help: ArgumentHelp("Carry out a plan saved with 'azseed plan --out FILE'; refused if the target or the dataset changed since.", valueName: "file"))
    var plan: String?

    @Flag(help: "Also delete blobs and entities of the dataset's container and partitions that the dataset does not hold.")
    var prune = false

    @OptionGroup var execution: ExecutionOptions


    func validate() throws {
        if plan != nil {
            if dryRun { throw ValidationError("--plan and --dry-run exclude each other; 'azseed plan' shows a plan") }
            if datasetOptions.changesGeneration || prune {
                throw ValidationError("--plan takes the seed, counts, window, access and --prune from the saved plan; drop those flags")
            }
        }
    }

    func run() async throws {
        if dryRun {
            let plan = try await Planning.plan(datasetOptions, target: target, prune: prune, digests: outputOptions.writesJSON)
            try await outputOptions.finishDryRun(plan)
            return
        }
        if let file = plan {
            try await applySaved(file)
            return
        }
        if prune { try Safety.confirmDeletes("--prune", target: target, yes: execution.yes) }
        let prepared = try Planning.desiredState(datasetOptions, target: target)
        try await StorageSession.with(target) { session in
            // Digests always: the ledger records the desired state's.
            let (plan, reference) = try await Planning.plan(prepared, datasetOptions, in: session, prune: prune, digests: true)
            try await record(plan, reference: reference, in: session)
            try await execute(plan, in: session)
        }
    }

    /// Makes the saved plan again from its own inputs and carries it out only if nothing
    /// changed since it was saved.
    private func applySaved(_ file: String) async throws {
        let saved = try SavedPlan.load(file, chosenDataset: datasetOptions.dataset.map { URL(fileURLWithPath: $0) }, blobEndpoint: try target.blobEndpoint())
        if saved.header.prune { try Safety.confirmDeletes("the saved plan (made with --prune)", target: target, yes: execution.yes) }
        try await StorageSession.with(target) { session in
            let plan = try await session.replan(saved)
            try await record(plan, reference: try await session.referenceTime(of: saved), in: session)
            try await execute(plan, in: session)
        }
    }

    /// Records the apply in the target's ledger before its first write (so a re-run of an
    /// interrupted apply makes the same data), or says why it cannot.
    private func record(_ plan: Plan, reference: ReferenceTime, in session: StorageSession) async throws {
        let clock = EdmDateTime(unixSeconds: Int64(Date().timeIntervalSince1970))
        if case .unavailable(let why) = try await session.recordApply(plan, reference: reference, tool: "azseed \(Azseed.version)", appliedAt: clock),
           case .available = reference.ledger {
            Console.note("the apply is not recorded in the target's ledger (\(why)); a run on another day resolves the window from its own clock")
        }
    }

    private func execute(_ plan: Plan, in session: StorageSession) async throws {
        try await Applying.execute(plan, in: session, concurrency: execution.concurrency, output: outputOptions, command: "apply")
    }
}

/// Deletes away from loopback need `--yes`.
enum Safety {
    static func confirmDeletes(_ what: String, target: TargetOptions, yes: Bool) throws {
        // The embedded storage (no account named) is always loopback.
        guard !yes, let account = try target.explicitAccount(), !account.isLoopback else { return }
        throw ValidationError("\(what) deletes data in \(account.name) at \(account.blobEndpoint.host ?? "?"), which is not a loopback address; add --yes to confirm")
    }

}

/// Carrying out a plan and reporting it, shared by apply, import and copy.
enum Applying {
    /// `copier` reads the blobs of a copy plan from its source account. With `--output json`
    /// the plan is not printed: the result document (``RunResult``) is, after the apply.
    static func execute(_ plan: Plan, in session: StorageSession, concurrency: Int, output: PlanOutputOptions, command: String,
                        copier: BlobCopier? = nil) async throws {
        try await output.emit(plan, printJSON: false)
        let activity = session.run.configuration.activity
        var report = ExecutionReport()
        report.unchanged = plan.summary.unchanged
        if !plan.isEmpty {
            let bar = ProgressBar(label: "applying", activity: activity)
            report = try await session.run.execute(plan, concurrency: concurrency, copier: copier) { bar.update($0) }
            bar.finish()
            let rate = report.seconds > 0 ? Int(Double(report.entityOperations) / report.seconds) : 0
            var line = "Apply complete: \(report.created) created, \(report.updated) updated, \(report.deleted) deleted, \(report.unchanged) unchanged in \(String(format: "%.2f", report.seconds)) s (\(rate) entities/s)"
            let counts = activity.snapshot
            line += "; \(counts.retries) retr\(counts.retries == 1 ? "y" : "ies")" + (counts.throttled > 0 ? " (\(counts.throttled) throttled)" : "")
            if let slowest = report.slowestPhase { line += "; slowest phase \(slowest.name) (\(slowest.items) in \(String(format: "%.2f", slowest.seconds)) s)" }
            line += ".\n"
            if let copier {
                // What a copy cost in bytes through this process: none for server-side copies.
                line += "Blob bytes: \(report.blobBytesCopiedServerSide) copied server-side by the target, \(report.blobBytesSent) through azseed"
                line += copier.fallbackReason.map { " (streamed because \($0))" } ?? ""
                line += ".\n"
            }
            if output.output == .json { Console.printError(line) } else { Console.print(line) }
        }
        if output.output == .json {
            var result = RunResult(command: command, target: plan.header.target, shard: plan.header.shard, seconds: Date().timeIntervalSince(Console.started), activity: activity)
            result.plan = plan
            result.report = report
            Console.print(result.json().pretty())
        }
        if let note = session.servingNote { Console.note(note) }
        // As with a dry run, but of what was done: a CI job can tell a run that changed the
        // target from one that found it as it should be.
        if output.detailedExitcode && !plan.isEmpty { throw ExitCode(2) }
    }
}
