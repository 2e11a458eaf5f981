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
        if to != nil {
            // Checked here, on the main thread while parsing (it may read --ca-file), and named as given.
            do { _ = try targetOptions() } catch let error as ValidationError {
                throw ValidationError(error.message.replacingOccurrences(of: "--connection-string", with: "--to"))
            }
        }
        if outputOptions.out != nil {
            throw ValidationError("--out: a copy plan is not saved (the source may change before it runs); review it with --dry-run, then run copy")
        }
        for name in containers where StorageNames.containerProblem(name) != nil {
            throw ValidationError("--container '\(name)': \(StorageNames.containerProblem(name)!)")
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

    /// The target options with `--to` as their connection string, checked.
    private func targetOptions() throws -> TargetOptions {
        var options = target
        if let to {
            options.connectionString = to
            try options.validate()
        }
        return options
    }

    /// Whether two endpoints are one service: scheme, host (DNS names
    /// without case; `localhost` and `::1` as 127.0.0.1), port and path (without a trailing slash).
    static func sameService(_ a: URL, _ b: URL) -> Bool {
        func key(_ url: URL) -> String {
            var host = (url.host ?? "").lowercased()
            if host == "localhost" || host == "::1" || host == "[::1]" { host = "127.0.0.1" }
            let scheme = (url.scheme ?? "").lowercased()
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            var path = url.path
            while path.hasSuffix("/") { path.removeLast() }
            return "\(scheme)://\(host):\(port)\(path)"
        }
        return Array(key(a).utf8) == Array(key(b).utf8)
    }

    func run() async throws {
        var options = self.target
        options.connectionString = to ?? options.connectionString  // checked in validate()
        let account = try sourceAccount()
        // The source's requests are logged and counted with the target's.
        let configuration = try await options.clientConfiguration()
        let target = try await options.resolve(configuration: configuration)
        if let targetAccount = target.account,
            Self.sameService(targetAccount.blobEndpoint, account.blobEndpoint) || Self.sameService(targetAccount.tableEndpoint, account.tableEndpoint)
        {
            throw ValidationError("--from and the target are the same account (\(account.blobEndpoint.absoluteString)); copy between two accounts")
        }
        if prune && !dryRun { try Safety.confirmDeletes("--prune", target: target, yes: execution.yes) }
        let source = CopySource(account: account, configuration: configuration)
        let (containers, tables, skipped) = try await source.selection(containers: containers, tables: tables)
        for name in skipped {
            Console.note("source container \(name) skipped: system containers (the static website's $web, $root) are not copied")
        }
        Console.note(
            "source \(source.displayName): \(containers.count) container\(containers.count == 1 ? "" : "s"), \(tables.count) table\(tables.count == 1 ? "" : "s")"
        )
        try await StorageSession.opened(target) { session in
            let desired = try await source.desiredStorage(containers: containers, tables: tables, target: session.run)
            let header = PlanHeader(
                target: session.run.target, source: .account, dataset: source.displayName, datasetDirectory: account.blobEndpoint.absoluteString,
                seed: nil, window: nil, counts: [:], access: nil, prune: prune)
            let plan = try await Planning.plan(desired, header: header, in: session, digests: outputOptions.writesJSON)
            if dryRun {
                try await outputOptions.finishDryRun(plan)
                return
            }
            let copier = BlobCopier(source: source.blobs, target: session.run.blobs.account)
            try await Applying.execute(plan, in: session, concurrency: execution.concurrency, output: outputOptions, command: "copy", copier: copier)
        }
    }
}
