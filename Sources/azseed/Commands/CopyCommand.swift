import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// `azseed copy --from CONN [--to CONN]`: another account's containers and tables become the
/// desired state, planned and applied like a snapshot — without a snapshot on disk.
struct CopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Make the target hold another account's containers and tables: plan, then apply, with blobs copied server-side.",
        discussion: """
            Blobs are copied by the target itself (Put Blob From URL with a read-only SAS made from the source's key, or the source's own SAS), \
            so their bytes do not pass through azseed; when the target cannot reach the source they are streamed through azseed instead. \
            Tables are read page by page and written in entity group transactions. Without --container or --table, everything is copied.
            """
    )

    @Option(help: ArgumentHelp("The source account's connection string (with its key or a SAS that can list and read).", valueName: "string"))
    var from: String

    @Option(
        help: ArgumentHelp(
            "The target account's connection string (default: --connection-string, $AZURE_STORAGE_CONNECTION_STRING, else the embedded storage).",
            valueName: "string"))
    var to: String?

    @Option(name: .customLong("container"), help: ArgumentHelp("A container to copy (repeatable).", valueName: "name"))
    var containers: [String] = []

    @Option(name: .customLong("table"), help: ArgumentHelp("A table to copy (repeatable).", valueName: "name"))
    var tables: [String] = []

    @OptionGroup var target: TargetOptions
    @OptionGroup var outputOptions: PlanOutputOptions

    @Flag(help: "Only show the plan.")
    var dryRun = false

    @Flag(help: "Also delete the target's blobs and entities, in the copied containers and tables, that the source does not hold.")
    var prune = false

    @OptionGroup var execution: ExecutionOptions

    func validate() throws {
        _ = try sourceAccount()
        if to != nil && target.namesAnAccount {
            throw ValidationError("--to names the target; drop --connection-string and the other account options (or drop --to)")
        }
        if let destination {
            // Checked here, on the main thread while parsing (it may read --ca-file), named as given.
            try target.validate(connection: destination)
        }
        if outputOptions.out != nil {
            throw ValidationError("--out: a copy plan is not saved (the source may change before it runs); review it with --dry-run, then run copy")
        }
        for name in containers where (StorageNames.containerProblem(name) ?? ReservedNames.containerProblem(name)) != nil {
            throw ValidationError("--container '\(name)': \((StorageNames.containerProblem(name) ?? ReservedNames.containerProblem(name))!)")
        }
        for name in tables {
            if let problem = StorageNames.tableProblem(name) ?? ReservedNames.tableProblem(name) {
                throw ValidationError("--table '\(name)': \(problem)")
            }
        }
    }

    /// The source: a connection string with a key or a SAS (tables take no anonymous request).
    private func sourceAccount() throws -> StorageAccount {
        let account: StorageAccount
        do { account = try ConnectionString.parse(from) } catch { throw ValidationError("--from: \(error)") }
        if case .anonymous = account.credential {
            throw ValidationError(
                "--from: the connection string has no AccountKey or SharedAccessSignature; the source's tables and listings need one")
        }
        return account
    }

    /// The destination when `--to` names it; else the target options say it.
    private var destination: TargetOptions.Connection? { to.map { TargetOptions.Connection(string: $0, flag: "--to") } }

    func run() async throws {
        let account = try sourceAccount()
        let target = try await self.target.resolve(readOnly: dryRun, connection: destination)
        do {
            try checkCopy(from: account, to: target)
            if prune && !dryRun { try Safety.confirmDeletes("--prune", target: target, yes: execution.yes) }
            let applied = try await Transfer.run(target, outputOptions, dryRun: dryRun) { observer in
                try await copyAccount(
                    from: account, containers: containers, tables: tables, to: target, prune: prune, dryRun: dryRun,
                    concurrency: execution.concurrency, digests: outputOptions.writesJSON, observer: observer)
            }
            if let applied { try Applying.report(applied, output: outputOptions, command: "copy", copy: true) }
        } catch let error as SameAccountError {
            throw ValidationError("--from and the target are the same account (\(error.endpoint)); copy between two accounts")
        }
    }
}
