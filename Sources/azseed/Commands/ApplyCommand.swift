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

    @Option(
        help: ArgumentHelp(
            "Carry out a plan saved with 'azseed plan --out FILE'; refused if the target or the dataset changed since.", valueName: "file"))
    var plan: String?

    @Flag(help: "Also delete blobs and entities of the dataset's container and partitions that the dataset does not hold.")
    var prune = false

    @Flag(
        help:
            "Then apply the dataset's pending migrations (its migrations/ folder), as 'azseed migrate apply' does: the seed and the migrations in one command."
    )
    var migrate = false

    @OptionGroup var execution: ExecutionOptions

    func validate() throws {
        if migrate && dryRun {
            throw ValidationError("--migrate and --dry-run exclude each other; 'azseed plan' and 'azseed migrate plan' show both")
        }
        if migrate && plan != nil {
            throw ValidationError("--migrate follows a fresh apply, not a saved plan; drop --plan, or run 'azseed migrate apply' after it")
        }
        if plan != nil {
            if dryRun { throw ValidationError("--plan and --dry-run exclude each other; 'azseed plan' shows a plan") }
            if datasetOptions.changesGeneration || prune {
                throw ValidationError("--plan takes the seed, counts, window, access and --prune from the saved plan; drop those flags")
            }
        }
    }

    func run() async throws {
        let target = try await self.target.resolve(readOnly: dryRun)
        if dryRun {
            try await outputOptions.finishDryRun(
                try await Planning.plan(
                    datasetOptions, target: target, prune: prune, digests: outputOptions.writesJSON, retention: outputOptions.retention()))
            return
        }
        let output = outputOptions
        let observer = ConsoleObserver(target: target) { plan in try await output.emit(plan, printJSON: false) }
        defer { observer.finish() }
        var seeder = Seeder(target: target, observer: observer, tool: "azseed \(Azseed.version)")
        seeder.migratesAfter = migrate
        let applied: AppliedPlan
        if let file = plan {
            // The saved plan is made again from its own inputs and carried out only if nothing
            // changed since it was saved.
            let saved = try await seeder.loadSaved(file, chosenDataset: datasetOptions.dataset.map { URL(fileURLWithPath: $0) })
            if saved.header.prune { try Safety.confirmDeletes("the saved plan (made with --prune)", target: target, yes: execution.yes) }
            applied = try await seeder.apply(
                saved, concurrency: execution.concurrency, migrations: datasetOptions.dataset == nil ? MigrationsFolder.local : nil)
        } else {
            if prune { try Safety.confirmDeletes("--prune", target: target, yes: execution.yes) }
            applied = try await seeder.apply(
                try datasetOptions.request(), prune: prune, concurrency: execution.concurrency, retention: outputOptions.retention(printsPlan: false))
        }
        observer.finish()
        try Applying.report(
            applied.plan, applied.report, activity: applied.activity, output: outputOptions, command: "apply", servingNote: applied.servingNote)
        if migrate { try await applyMigrations(target) }
    }

    /// `--migrate`: the pending migrations of the dataset, under the migrate lock, after the
    /// seed (whose writes are each conditional on what its plan read, so it needs no lock).
    private func applyMigrations(_ target: RunTarget) async throws {
        let folder = try MigrationsFolder.resolve(migrations: nil, dataset: datasetOptions.dataset)
        guard FileManager.default.fileExists(atPath: folder.path) else { return }
        let observer = ConsoleObserver(target: target)
        defer { observer.finish() }
        let reports = try await Migrator(target: target, folder: folder, observer: observer, tool: "azseed \(Azseed.version)").apply()
        observer.finish()
        Console.print(MigrationPrinting.appliedText(reports) + "\n")
    }
}

/// Deletes away from loopback need `--yes`.
enum Safety {
    static func confirmDeletes(_ what: String, target: RunTarget, yes: Bool) throws {
        guard !yes, let place = target.deletesNeedConfirmation else { return }
        throw ValidationError("\(what) deletes data in \(place); add --yes to confirm")
    }
}

/// Running a plan-then-apply use case (import, copy) with its plan printed before the first
/// write, or, with --dry-run, printed as `plan` prints it.
enum Transfer {
    static func run(
        _ target: RunTarget, _ output: PlanOutputOptions, dryRun: Bool,
        _ body: (ConsoleObserver) async throws -> AppliedPlan
    ) async throws -> AppliedPlan? {
        let observer = ConsoleObserver(target: target) { plan in if !dryRun { try await output.emit(plan, printJSON: false) } }
        defer { observer.finish() }
        let applied = try await body(observer)
        observer.finish()
        if dryRun {
            try await output.finishDryRun(applied.plan)
            return nil
        }
        return applied
    }
}

/// Carrying out a plan and reporting it, shared by apply, import and copy.
enum Applying {
    /// The report of a use case's apply; `copy` adds where the blob bytes went.
    static func report(_ applied: AppliedPlan, output: PlanOutputOptions, command: String, copy: Bool = false) throws {
        try report(
            applied.plan, applied.report, activity: applied.activity, output: output, command: command, servingNote: applied.servingNote,
            blobBytes: copy ? applied.streamedBecause.map { " (streamed because \($0)\(advice(applied)))" } ?? "" : nil)
    }

    /// How to copy server-side next time: an `azseed emulator` the user started reads a remote
    /// source only from an origin it allows (the embedded storage, started here, reads none).
    private static func advice(_ applied: AppliedPlan) -> String {
        guard let origin = applied.refusedCopySource, applied.plan.header.target.embeddedDataDirectory == nil else { return "" }
        return "; to copy server-side, start the target emulator with --allow-copy-source \(origin)"
    }

    /// The lines after an apply: what was done, at what rate, with how many retries (and for a
    /// copy, how many blob bytes went through this process); with `--output json`, the result
    /// document. `--detailed-exitcode` exits 2 when the plan changed something.
    static func report(
        _ plan: Plan, _ report: ExecutionReport, activity: RequestActivity, output: PlanOutputOptions, command: String, servingNote: Phrase?,
        blobBytes: String? = nil
    ) throws {
        if !plan.isEmpty {
            let rate = report.seconds > 0 ? Int(Double(report.entityOperations) / report.seconds) : 0
            var line =
                "Apply complete: \(report.created) created, \(report.updated) updated, \(report.deleted) deleted, \(report.unchanged) unchanged in \(String(format: "%.2f", report.seconds)) s of writes (\(rate) entities/s), \(String(format: "%.2f", Date().timeIntervalSince(Console.started))) s in all"
            let counts = activity.snapshot
            line += "; \(counts.retries) retr\(counts.retries == 1 ? "y" : "ies")" + (counts.throttled > 0 ? " (\(counts.throttled) throttled)" : "")
            if let slowest = report.slowestPhase {
                line += "; slowest phase \(slowest.name) (\(slowest.items) in \(String(format: "%.2f", slowest.seconds)) s)"
            }
            line += ".\n"
            if let blobBytes {
                // What a copy cost in bytes through this process: none for server-side copies.
                line += "Blob bytes: \(report.blobBytesCopiedServerSide) copied server-side by the target, \(report.blobBytesSent) through azseed"
                line += blobBytes + ".\n"
            }
            if output.output == .json { Console.printError(line) } else { Console.print(line) }
        }
        if output.output == .json {
            var result = RunResult(
                command: command, target: plan.header.target, shard: plan.header.shard, seconds: Date().timeIntervalSince(Console.started),
                activity: activity)
            result.plan = plan
            result.report = report
            Console.print(result.json().pretty())
        }
        if let note = servingNote { Console.note(note.rendered(.flags)) }
        // As with a dry run, but of what was done: a CI job can tell a run that changed the
        // target from one that found it as it should be.
        if output.detailedExitcode && !plan.isEmpty { throw ExitCode(2) }
    }
}
