import ArgumentParser
import AzureStorage
import EmbeddedEmulator
import Foundation
import SeedKit
import SeedRunner

/// `azseed migrate`: versioned migrations of the data already in an account.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Evolve the data already in an account with versioned migration files (V<version>__<description>.yaml).",
        discussion:
            "The target's ledger (table azseedledger) records each migration's checksum, state and checkpoint: an interrupted apply resumes where it stopped. See docs/MIGRATIONS.md.",
        subcommands: [
            MigratePlanCommand.self, MigrateApplyCommand.self, MigrateStatusCommand.self, MigrateValidateCommand.self, MigrateLintCommand.self,
            MigrateBaselineCommand.self,
            MigrateRepairCommand.self, MigrateUndoCommand.self, MigrateControlCommand.self, MigrateRehearseCommand.self,
        ]
    )
}

/// Where the migrations are and which target they run against: shared by every subcommand.
struct MigrationOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The folder of migration files; default: migrations/ in the dataset folder (--dataset), else ./migrations, else the default dataset's.",
            valueName: "dir"))
    var migrations: String?

    @Option(help: ArgumentHelp("The dataset folder whose migrations/ folder to use.", valueName: "dir"))
    var dataset: String?

    @OptionGroup var target: TargetOptions

    @Option(help: "How to print: text or json (one document).")
    var output: PlanOutputOptions.Format = .text

    /// `--shard` splits plan and apply; the other subcommands work on the whole ledger.
    func refuseShard(_ command: String) throws {
        if target.shard != nil || target.shards != nil {
            throw ValidationError("--shard splits 'migrate plan' and 'migrate apply'; run 'migrate \(command)' without it")
        }
    }

    /// `--migrations`, else `--dataset`'s `migrations/`, else `./migrations` when there is one,
    /// else the default dataset's (the one `plan` and `apply` use with no `--dataset`), so the
    /// hint a run of the built-in dataset gives — `azseed migrate plan` — works as typed.
    var folder: URL {
        get throws { try MigrationsFolder.resolve(migrations: migrations, dataset: dataset) }
    }

    /// `readOnly`: the subcommand writes nothing (plan, status, validate, an undo's dry run).
    /// `scope`: said before what a migration did (a rehearsal's copy).
    func migrator(readOnly: Bool = false, scope: String = "") async throws -> (Migrator, ConsoleObserver) {
        let target = try await self.target.resolve(readOnly: readOnly)
        let observer = ConsoleObserver(target: target, progressAsJSON: output == .json, scope: scope)
        return (Migrator(target: target, folder: try folder, observer: observer, tool: "azseed \(Azseed.version)"), observer)
    }

    static func version(_ text: String?, flag: String) throws -> MigrationVersion? {
        guard let text else { return nil }
        guard let version = MigrationVersion(text) else {
            throw ValidationError("\(flag) '\(text)' is not a version (an integer or dotted integers, e.g. 3 or 1.2)")
        }
        return version
    }
}

/// How fast `migrate apply` and `undo` write: `--max-rate`.
struct PaceOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Write at most this many entities per second (the batches in flight adapt to the service's answers either way).", valueName: "N"))
    var maxRate: Int?

    func validate() throws {
        if let maxRate, !(1...10_000_000).contains(maxRate) {
            throw ValidationError("--max-rate \(maxRate): give 1 to 10000000 entities per second")
        }
    }
}

/// `azseed migrate plan`: the dry run.
struct MigratePlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan", abstract: "Show what each pending migration would change (a dry run; writes nothing).")

    @OptionGroup var options: MigrationOptions

    @Option(help: ArgumentHelp("Plan the pending migrations up to this version only.", valueName: "version"))
    var to: String?

    @Flag(help: "Exit 2 when migrations are pending (0 when none, 1 on error).")
    var detailedExitcode = false

    @OptionGroup var many: TargetsOptions

    func run() async throws {
        let to = try MigrationOptions.version(to, flag: "--to")
        if many.targets != nil { return try await runOnTargets(to: to) }
        let (migrator, observer) = try await options.migrator(readOnly: true)
        let (status, reports) = try await migrator.plan(to: to)
        observer.finish()
        // As `terraform plan`: a plan that apply would refuse fails — with the problem alone, on
        // stderr; no plan (nor "no pending migrations") on stdout before it.
        if let first = status.problems.first {
            throw RunError("apply would refuse: " + Migrator.refusal(first, count: status.problems.count, writing: false))
        }
        if options.output == .json {
            Console.print(MigrationPrinting.json(reports, shard: migrator.target.shard).pretty())
        } else {
            Console.print(MigrationPrinting.planText(reports, status: status, folder: migrator.folder, shard: migrator.target.shard) + "\n")
        }
        // A plan apply would stop in fails too, after showing where.
        for report in reports {
            for (i, op) in report.operations.enumerated() where op.failures > 0 {
                throw RunError(
                    "apply would stop at migration \(report.version), operation \(i + 1) (\(op.op)): \(op.countedFailures) it cannot change, e.g. \(op.firstFailure ?? "")"
                )
            }
        }
        if detailedExitcode && !reports.isEmpty { throw ExitCode(2) }
    }

    /// `--targets`: each account's plan, as `migrate plan` would judge it, in one table.
    private func runOnTargets(to: MigrationVersion?) async throws {
        let rows = try await MigrateTargets.run(
            options, many, command: "plan", readOnly: true,
            work: { migrator in
                let (status, reports) = try await migrator.plan(to: to)
                if let first = status.problems.first {
                    throw RunError("apply would refuse: " + Migrator.refusal(first, count: status.problems.count, writing: false))
                }
                for report in reports {
                    for (i, op) in report.operations.enumerated() where op.failures > 0 {
                        throw RunError(
                            "apply would stop at migration \(report.version), operation \(i + 1) (\(op.op)): \(op.countedFailures) it cannot change")
                    }
                }
                return reports
            },
            row: MigrateTargets.row)
        try MigrateTargets.finish(rows, headers: ["PENDING", "CHANGES", "VERSIONS"], command: "plan", json: options.output == .json)
        if detailedExitcode && rows.contains(where: { $0.cells.first.map { $0 != "0" } ?? false }) { throw ExitCode(2) }
    }
}

/// `azseed migrate apply`.
struct MigrateApplyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Apply the pending migrations in order; an interrupted one resumes at its checkpoint.",
        discussion: "Against an endpoint that is not loopback, --yes is required.")

    @OptionGroup var options: MigrationOptions

    @Option(help: ArgumentHelp("Apply the pending migrations up to this version only.", valueName: "version"))
    var to: String?

    @Flag(help: "Confirm changing data in an endpoint that is not loopback.")
    var yes = false

    @Option(
        help: ArgumentHelp(
            "First write a snapshot of every table and container the migrations touch into this new folder ('azseed import DIR' restores it).",
            valueName: "dir"))
    var backup: String?

    @OptionGroup var pace: PaceOptions

    @OptionGroup var many: TargetsOptions

    func validate() throws {
        if backup != nil && (options.target.shard != nil || options.target.shards != nil) {
            throw ValidationError("--backup writes one snapshot of the whole target; run 'migrate apply --backup DIR' without --shard")
        }
        if backup != nil && many.targets != nil {
            throw ValidationError("--backup writes one target's snapshot; run 'migrate apply --backup DIR' for each account, without --targets")
        }
    }

    func run() async throws {
        let to = try MigrationOptions.version(to, flag: "--to")
        if many.targets != nil { return try await runOnTargets(to: to) }
        var (migrator, observer) = try await options.migrator()
        migrator.maxRate = pace.maxRate
        if !yes, let place = migrator.target.deletesNeedConfirmation {
            throw ValidationError("migrate apply changes data in \(place); add --yes to confirm")
        }
        Interruption.say(
            "azseed: migrate apply interrupted; what it did is recorded in the target's ledger ('azseed migrate status' shows it) — run the same command again to resume where it stopped"
        )
        let reports = try await migrator.apply(to: to, backup: backup.map { URL(fileURLWithPath: $0) })
        observer.finish()
        if options.output == .json {
            Console.print(MigrationPrinting.json(reports).pretty())
        } else {
            Console.print(MigrationPrinting.appliedText(reports) + "\n")
        }
    }

    /// `--targets`: every account migrated, each with its own ledger and lock; one table.
    private func runOnTargets(to: MigrationVersion?) async throws {
        let (yes, maxRate) = (self.yes, pace.maxRate)
        let rows = try await MigrateTargets.run(
            options, many, command: "apply", readOnly: false,
            work: { migrator in
                var migrator = migrator
                migrator.maxRate = maxRate
                if !yes, let place = migrator.target.deletesNeedConfirmation {
                    throw ValidationError("migrate apply changes data in \(place); add --yes to confirm")
                }
                return try await migrator.apply(to: to)
            },
            row: MigrateTargets.row)
        try MigrateTargets.finish(rows, headers: ["APPLIED", "CHANGES", "VERSIONS"], command: "apply", json: options.output == .json)
    }
}

/// `azseed migrate status`.
struct MigrateStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "List the migrations: applied (when, by whom, counts), pending, running or failed, changed or missing files."
    )

    @OptionGroup var options: MigrationOptions

    @OptionGroup var many: TargetsOptions

    func validate() throws { try options.refuseShard("status") }

    func run() async throws {
        if many.targets != nil { return try await runOnTargets() }
        let (migrator, observer) = try await options.migrator(readOnly: true)
        let status = try await migrator.status()
        observer.finish()
        if options.output == .json {
            Console.print(MigrationPrinting.json(status).pretty())
        } else {
            Console.print(MigrationPrinting.statusText(status) + "\n")
        }
    }

    /// `--targets`: each account's history in one line — what is applied, pending, or wrong.
    private func runOnTargets() async throws {
        let rows = try await MigrateTargets.run(
            options, many, command: "status", readOnly: true, work: { migrator in try await migrator.status() },
            row: { name, status in
                let count = { (states: [MigrationStatus.State]) in status.entries.filter { states.contains($0.state) }.count }
                let latest = status.entries.last { [.applied, .baseline].contains($0.state) }?.version ?? "—"
                let problems = status.problems.map { "V\($0.version) \($0.state.rawValue)" }.joined(separator: ", ")
                return MigrateTargets.Row(
                    name: name,
                    cells: [
                        latest, String(count([.applied, .baseline, .belowBaseline])), String(count([.pending, .undone, .running, .inShards])),
                        problems,
                    ],
                    json: MigrationPrinting.json(status).members)
            })
        try MigrateTargets.finish(rows, headers: ["VERSION", "APPLIED", "PENDING", "PROBLEMS"], command: "status", json: options.output == .json)
    }
}

/// `azseed migrate lint`: what each file does that a reviewer should see before it runs.
struct MigrateLintCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lint",
        abstract:
            "Flag destructive operations (exit 1 unless acknowledged with allow-destructive: true), operations with no exact undo, and filters that match nothing; writes nothing."
    )

    @OptionGroup var options: MigrationOptions

    func validate() throws { try options.refuseShard("lint") }

    func run() async throws {
        let (migrator, observer) = try await options.migrator(readOnly: true)
        let findings = try await migrator.lint()
        observer.finish()
        let errors = findings.filter { $0.severity == .error }.count
        if options.output == .json {
            Console.print(MigrationPrinting.json(findings).pretty())
        } else {
            Console.print(MigrationPrinting.lintText(findings) + "\n")
        }
        if errors > 0 {
            throw RunError(
                "migrate lint: \(errors) error\(errors == 1 ? "" : "s") (above), which plan and apply refuse; a destructive operation is acknowledged with 'allow-destructive: true' beside its keys"
            )
        }
    }
}

/// `azseed migrate validate`: exit 1 when a file changed, is missing, is out of order, or a run failed.
struct MigrateValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check the files against the ledger: exit 1 on a changed checksum, a missing file, an out-of-order file or a failed run.")

    @OptionGroup var options: MigrationOptions

    func validate() throws { try options.refuseShard("validate") }

    func run() async throws {
        let (migrator, observer) = try await options.migrator(readOnly: true)
        let status = try await migrator.status()
        observer.finish()
        if options.output == .json {
            Console.print(MigrationPrinting.json(status).pretty())
        } else if status.problems.isEmpty {
            Console.print("Validated \(status.entries.count) migration(s): no problems.\n")
        }
        if let first = status.problems.first {
            throw RunError(Migrator.refusal(first, count: status.problems.count, writing: false))
        }
    }
}

/// `azseed migrate baseline --version V`.
struct MigrateBaselineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "baseline", abstract: "Count an account without migration history as migrated up to a version (files up to it never run).")

    @OptionGroup var options: MigrationOptions

    func validate() throws { try options.refuseShard("baseline") }

    @Option(help: ArgumentHelp("The version the account's data already matches.", valueName: "version"))
    var version: String

    func run() async throws {
        let version = try MigrationOptions.version(version, flag: "--version")!
        let (migrator, observer) = try await options.migrator()
        _ = try await migrator.baseline(version)
        observer.finish()
        Console.print("Baseline recorded: the target counts as migrated up to \(version.canonical).\n")
    }
}

/// `azseed migrate repair`.
struct MigrateRepairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract:
            "Clear failed runs (apply then resumes them), remove ledger records whose file is gone, and with --accept-checksums record changed files' checksums."
    )

    @OptionGroup var options: MigrationOptions

    func validate() throws { try options.refuseShard("repair") }

    @Flag(help: "Record the current checksum of applied migrations whose files changed.")
    var acceptChecksums = false

    @Flag(help: "First end the account's migrate lock, held by a run that is gone (killed, or on a machine that went away).")
    var breakLock = false

    func run() async throws {
        let (migrator, observer) = try await options.migrator()
        var lines: [String] = []
        if breakLock {
            lines.append(try await migrator.breakLock() ? "Broke the account's migrate lock." : "The account's migrate lock was not held.")
        }
        let done = try await migrator.repair(acceptChecksums: acceptChecksums)
        observer.finish()
        if !done.cleared.isEmpty { lines.append("Cleared the failed run of migration \(done.cleared.joined(separator: ", ")): apply resumes it.") }
        if !done.restarted.isEmpty {
            lines.append(
                "Failed run(s) of \(done.restarted.joined(separator: ", ")) whose file changed since start over: apply runs them from the first operation. What the failed run wrote stays, and the new run finds it already in the shape it makes: undo will refuse those migrations (restore a backup to go back instead)."
            )
        }
        if !done.removed.isEmpty { lines.append("Removed ledger record(s) without a file: \(done.removed.joined(separator: ", ")).") }
        if !done.keptFromCode.isEmpty {
            lines.append(
                "Kept the record(s) of \(done.keptFromCode.joined(separator: ", ")), applied by a program from its Swift code: only that program runs them."
            )
        }
        for version in done.unresolved {
            lines.append(
                "Migration \(version)'s file changed since it was applied: pass --accept-checksums to record its new checksum (or restore the file).")
        }
        if !done.realigned.isEmpty { lines.append("Recorded the current checksum of migration \(done.realigned.joined(separator: ", ")).") }
        Console.print((lines.isEmpty ? "Nothing to repair." : lines.joined(separator: "\n")) + "\n")
    }
}

/// `azseed migrate rehearse [--sample N]`: apply and undo on a copy in memory, compared.
struct MigrateRehearseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rehearse",
        abstract:
            "Apply the pending migrations to an in-memory copy of what they touch, undo them, and compare every entity and blob byte for byte; the target is only read (no lock, no ledger write).",
        discussion:
            "--sample N copies N entities a partition (and N blobs a container) instead of everything. Exit 1 when apply stops on the copy, undo refuses, or anything differs after undo."
    )

    @OptionGroup var options: MigrationOptions

    @Option(help: ArgumentHelp("Rehearse the pending migrations up to this version only.", valueName: "version"))
    var to: String?

    @Option(help: ArgumentHelp("Copy this many entities of each partition, and blobs of each container (default: all).", valueName: "N"))
    var sample: Int?

    func validate() throws {
        try options.refuseShard("rehearse")
        if let sample, !(1...1_000_000).contains(sample) { throw ValidationError("--sample \(sample): give 1 to 1000000 entities a partition") }
    }

    func run() async throws {
        let to = try MigrationOptions.version(to, flag: "--to")
        let (migrator, observer) = try await options.migrator(readOnly: true, scope: "on the copy: ")
        let result = try await MigrateRehearse(migrator) { try await EmulatorEmbeddedStorage.scratch() }.run(to: to, sample: sample)
        observer.finish()
        if options.output == .json {
            Console.print(MigrationPrinting.json(result).pretty())
        } else {
            Console.print(MigrationPrinting.rehearsalText(result) + "\n")
        }
        if result.applied.isEmpty { return }
        if let refused = result.undoRefused {
            throw RunError("migrate rehearse: applied on the copy, but undo refused: " + refused)
        }
        if result.differenceCount > 0 {
            throw RunError(
                "migrate rehearse: \(result.differenceCount) entit\(result.differenceCount == 1 ? "y or blob differs" : "ies or blobs differ") after apply and undo (listed above); undo would not give this data back exactly"
            )
        }
    }
}

/// `azseed migrate control pause|resume|rate N|rate off|cancel`: speaks to the applies and
/// undos running on the target, on any host, through its ledger.
struct MigrateControlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract: "Pause, resume, rate-limit or cancel the migrate apply/undo runs on the target (any host, any shard); they obey within 15 s.",
        discussion:
            "pause: writes wait (the lock is kept). resume. rate N: at most N entities a second, in place of their --max-rate; rate off: their own again. cancel: they stop before their next write, checkpoints kept; running the same command again resumes. migrate status shows what was asked."
    )

    @Argument(help: ArgumentHelp("pause, resume, rate or cancel.", valueName: "action"))
    var action: String

    @Argument(help: ArgumentHelp("For rate: entities a second (1 to 10000000), or off.", valueName: "N"))
    var value: String?

    @OptionGroup var options: MigrationOptions

    func validate() throws {
        try options.refuseShard("control")
        _ = try request
    }

    var request: MigrationControl.Request {
        get throws {
            switch (action, value) {
            case ("pause", nil): return .pause
            case ("resume", nil): return .resume
            case ("cancel", nil): return .cancel
            case ("rate", "off"): return .rate(nil)
            case ("rate", let value?):
                guard let rate = Int(value), (1...MigrationControl.highestRate).contains(rate) else {
                    throw ValidationError("migrate control rate '\(value)': give 1 to \(MigrationControl.highestRate) entities a second, or off")
                }
                return .rate(rate)
            case ("rate", nil): throw ValidationError("migrate control rate: give entities a second (1 to \(MigrationControl.highestRate)), or off")
            case ("pause", _?), ("resume", _?), ("cancel", _?): throw ValidationError("migrate control \(action) takes no value")
            default: throw ValidationError("migrate control '\(action)': give pause, resume, rate N, rate off or cancel")
            }
        }
    }

    func run() async throws {
        let request = try self.request
        let (migrator, observer) = try await options.migrator()
        let control = try await migrator.control(request)
        observer.finish()
        if options.output == .json {
            Console.print(JSONValue.object([("control", MigrationPrinting.json(control))]).pretty())
            return
        }
        let said: String
        switch request {
        case .pause:
            said =
                "Paused: running applies and undos on this target stop writing within 15 s, holding the lock. 'azseed migrate control resume' resumes them."
        case .resume: said = "Resumed: paused applies and undos on this target write again within 15 s."
        case .rate(let rate?):
            said =
                "Rate set: applies and undos on this target write at most \(rate) entities a second from within 15 s, in place of their --max-rate."
        case .rate(nil): said = "Rate lifted: applies and undos on this target keep their own --max-rate again."
        case .cancel:
            said =
                "Cancel asked: applies and undos running on this target stop before their next write, within 15 s, checkpoints kept; running the same command again resumes. Runs started from now on are not cancelled."
        }
        Console.print("\(said)\nControl: \(control.summary)\n")
    }
}

/// `azseed migrate undo VERSION`: puts back the applied migrations from the newest down to VERSION.
struct MigrateUndoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "undo",
        abstract: "Put back exactly what the applied migrations from the newest down to VERSION did (newest first).",
        discussion:
            "Only migrations whose every operation is invertible can be undone (rename-property, set-property and compute with if-missing, replace-in-property, map-values mapping no two values to one, split-property, join-properties, move-blobs, create-table), and only when apply found nothing undo could not tell apart; for the others restore the snapshot 'migrate apply --backup DIR' wrote. Against an endpoint that is not loopback, --yes is required."
    )

    @OptionGroup var options: MigrationOptions

    func validate() throws { try options.refuseShard("undo") }

    @Argument(help: ArgumentHelp("The oldest migration to undo.", valueName: "version"))
    var version: String

    @Flag(help: "Show what the undo would change; write nothing.")
    var dryRun = false

    @Flag(help: "Confirm changing data in an endpoint that is not loopback.")
    var yes = false

    @OptionGroup var pace: PaceOptions

    func run() async throws {
        guard let version = MigrationVersion(version) else {
            throw ValidationError("'\(Printable.escaped(version, quotes: false))' is not a version (an integer or dotted integers, e.g. 3 or 1.2)")
        }
        var (migrator, observer) = try await options.migrator(readOnly: dryRun)
        migrator.maxRate = pace.maxRate
        if dryRun {
            let reports = try await migrator.planUndo(to: version)
            observer.finish()
            if options.output == .json {
                Console.print(MigrationPrinting.json(reports).pretty())
            } else {
                Console.print(MigrationPrinting.undoPlanText(reports) + "\n")
            }
            return
        }
        if !yes, let place = migrator.target.deletesNeedConfirmation {
            throw ValidationError("migrate undo changes data in \(place); add --yes to confirm")
        }
        Interruption.say(
            "azseed: migrate undo interrupted; what it did is recorded in the target's ledger ('azseed migrate status' shows it) — run the same command again to finish the undo"
        )
        let reports = try await migrator.undo(to: version)
        observer.finish()
        if options.output == .json {
            Console.print(MigrationPrinting.json(reports).pretty())
        } else {
            Console.print(MigrationPrinting.undoneText(reports) + "\n")
        }
    }
}
