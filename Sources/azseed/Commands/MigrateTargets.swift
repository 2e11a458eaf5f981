import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// `--targets FILE [--parallel N] [--target-index I]`: `migrate plan`, `apply` and `status`
/// against many accounts, each with its own ledger and lock.
struct TargetsOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Run against every account this YAML file names (targets: [{name, connection-string | account-name | …}]); ${VAR} is the environment's.",
            valueName: "file"))
    var targets: String?

    @Option(help: ArgumentHelp("With --targets: how many accounts at once (1 to 64; default 1).", valueName: "N"))
    var parallel: Int?

    @Option(
        help: ArgumentHelp(
            "With --targets: only the target at this index, from 0 (a Kubernetes Indexed Job passes $(JOB_COMPLETION_INDEX)).", valueName: "I"))
    var targetIndex: Int?

    func validate() throws {
        if targets == nil, parallel != nil || targetIndex != nil {
            throw ValidationError("--parallel and --target-index go with --targets FILE")
        }
        if let parallel, !(1...64).contains(parallel) { throw ValidationError("--parallel \(parallel): give 1 to 64 accounts at once") }
        if let targetIndex, targetIndex < 0 { throw ValidationError("--target-index \(targetIndex): give 0 or more") }
    }
}

/// One run of a `migrate` command per target of a `--targets` file: each failure kept to its
/// target, a summary table, the exit code saying whether every one succeeded.
enum MigrateTargets {
    /// What one target's run came to, for the summary.
    struct Row {
        var name: String
        var failure: String?
        /// Columns after the result, by the command.
        var cells: [String]
        var json: [(String, JSONValue)]
    }

    static func run<T: Sendable>(
        _ options: MigrationOptions, _ many: TargetsOptions, command: String, readOnly: Bool,
        work: @escaping @Sendable (Migrator) async throws -> T, row: @escaping (String, T) -> Row
    ) async throws -> [Row] {
        guard let path = many.targets else { return [] }
        if options.target.namesAnAccount || options.target.dataDir != nil {
            throw ValidationError("--targets names the accounts; drop --connection-string, --account-name, the endpoints, --sas-token and --data-dir")
        }
        if options.target.shard != nil || options.target.shards != nil {
            throw ValidationError("--targets runs each account whole; --shard splits one account's work")
        }
        let file = try await BlockingPool.run { try TargetsFile.read(URL(fileURLWithPath: path), environment: ProcessInfo.processInfo.environment) }
        let all = file.entries
        if let index = many.targetIndex, !all.indices.contains(index) {
            throw ValidationError("--target-index \(index): \(path) names \(all.count) target\(all.count == 1 ? "" : "s") (0 to \(all.count - 1))")
        }
        let entries = many.targetIndex.map { [all[$0]] } ?? all
        let folder = try options.folder
        let global = options.target
        let configuration = try await global.clientConfiguration()
        let results = await ManyTargets.run(entries.map(\.name), parallel: many.parallel ?? 1) { index in
            let entry = entries[index]
            // `--flag=value`, one word each: a value beginning with `-` (or reading `-h`) is a
            // value, never another flag.
            var arguments = entry.options.map { "--\($0.flag)=\($0.value)" }
            if !entry.options.contains(where: { $0.flag == "timeout" }) { arguments.append("--timeout=\(global.timeout)") }
            if !entry.options.contains(where: { $0.flag == "lock-timeout" }) { arguments.append("--lock-timeout=\(global.lockTimeout)") }
            let options = try TargetOptions.parse(arguments)
            guard options.namesAnAccount || options.dataDir != nil else {
                throw ValidationError("target \(entry.name) names no account; give connection-string, account-name, the endpoints or data-dir")
            }
            var target = try await options.resolve(configuration: configuration, readOnly: readOnly, environment: false)
            target.command = "azseed migrate \(command)"
            let migrator = Migrator(target: target, folder: folder, observer: TargetObserver(name: entry.name), tool: "azseed \(Azseed.version)")
            return try await work(migrator)
        }
        return zip(entries, results).map { entry, outcome in
            switch outcome.result {
            case .success(let value): return row(entry.name, value)
            case .failure(let error):
                // What the file's values hold (an account key in a variable put under the wrong
                // key, a connection string) is never shown.
                return Row(name: entry.name, failure: TargetsFile.redacted(Failure.describe(error).line, entry), cells: [], json: [])
            }
        }
    }

    /// A plan's or an apply's row: how many migrations, their changes, their versions.
    static func row(_ name: String, _ reports: [MigrationReport]) -> Row {
        let changes = reports.flatMap(\.operations).reduce(0) { $0 + $1.changes }
        return Row(
            name: name, cells: [String(reports.count), String(changes), reports.map(\.version).joined(separator: ", ")],
            json: MigrationPrinting.json(reports).members)
    }

    /// The summary on stdout (a table, or `{"targets": […]}`), then — when a target failed — one
    /// line on stderr and exit 1.
    static func finish(_ rows: [Row], headers: [String], command: String, json: Bool) throws {
        if json {
            let targets = rows.map { row in
                JSONValue.object(
                    [("name", .string(row.name)), ("result", .string(row.failure == nil ? "ok" : "failed"))]
                        + (row.failure.map { [("error", JSONValue.string($0))] } ?? []) + row.json)
            }
            Console.print(JSONValue.object([("targets", .array(targets))]).pretty())
        } else {
            var table = [["TARGET", "RESULT"] + headers]
            for row in rows {
                table.append([row.name, row.failure == nil ? "ok" : "failed"] + (row.failure.map { [$0] } ?? row.cells))
            }
            // The last cell of a row (a failure's line, or the last column) is not padded.
            var widths = Array(repeating: 0, count: headers.count + 2)
            for cells in table {
                for (i, cell) in cells.enumerated() where i < cells.count - 1 { widths[i] = max(widths[i], cell.count) }
            }
            let lines = table.map { cells in
                cells.enumerated().map { i, cell in i == cells.count - 1 ? cell : cell + String(repeating: " ", count: max(0, widths[i] - cell.count))
                }
                .joined(separator: "  ").replacing(/\s+$/, with: "")
            }
            Console.print(lines.joined(separator: "\n") + "\n")
        }
        let failed = rows.filter { $0.failure != nil }.map(\.name)
        if !failed.isEmpty {
            let others = failed.count < rows.count ? ", and the others are done" : ""
            throw RunError(
                "migrate \(command): \(failed.count) of \(rows.count) target\(rows.count == 1 ? "" : "s") failed (\(failed.prefix(5).joined(separator: ", "))\(failed.count > 5 ? ", …" : "")); the table says why\(others)"
            )
        }
    }
}

/// A target's notes and migrations, each line naming the target (several run at once).
final class TargetObserver: RunObserver {
    let name: String
    init(name: String) { self.name = name }

    func note(_ text: Phrase) { Console.note("[\(name)] \(text.rendered(.flags))") }

    func event(_ event: RunEvent) {
        switch event {
        case .migrationFinished(let report):
            note("migration \(report.version) \(report.state): \(report.operations.map { "\($0.op) \($0.changes)" }.joined(separator: ", "))")
        case .migrationFailed(let migration, let reason): note("migration \(migration.version) failed: \(reason)")
        default: break
        }
    }
}
