import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// `azseed scan --out DIR`: a dataset that reproduces an existing account's shape.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Read an account's containers and tables and write a dataset that reproduces their shape.",
        discussion: """
            Per table partition a kind generated with its observed count, property types and presence, \
            references between partitions, templates, value lists with their frequencies, ranges, date windows \
            and blob URLs; dataset.yaml begins with what was inferred and why, and fidelity.md and fidelity.html \
            compare the account with the dataset generated again. No value that identifies a person (e-mail, \
            phone, URL, free text) or is seen in fewer than 5 entities is copied: such text is generated in its \
            shape. --copy-values copies the account exactly instead: every entity (entities/<table>/<n>.jsonl) \
            and every blob with its content headers and metadata, what was inferred kept beside each kind as \
            comments.
            """
    )

    @OptionGroup var target: TargetOptions

    @Option(help: ArgumentHelp("The folder to write the dataset into (new or empty).", valueName: "dir"))
    var out: String

    @Option(help: ArgumentHelp("A container to scan (repeatable; default: every container).", valueName: "name"))
    var container: [String] = []

    @Option(help: ArgumentHelp("A table to scan (repeatable; default: every table).", valueName: "name"))
    var table: [String] = []

    @Option(
        help: ArgumentHelp(
            "Entities per partition whose values the inferred kinds may draw from (with --copy-values: the commented alternative's).", valueName: "N")
    )
    var sample: Int = 20

    @Flag(help: "Copy the blobs into the dataset (default: placeholders of the same content types and sizes).")
    var copyBlobs = false

    @Flag(
        help:
            "Copy the account exactly: every entity as it is, every blob with its content headers and metadata (generating the dataset gives the account back). By default no value that identifies a person (e-mail, phone, URL, free text) or is seen in fewer than 5 entities is copied."
    )
    var copyValues = false

    @Option(help: ArgumentHelp("The new dataset's name (it namespaces the RowKeys it generates).", valueName: "name"))
    var name: String = "scanned"

    @Option(help: ArgumentHelp("Scan a snapshot folder ('azseed export' or 'azseed generate' output) instead of an account.", valueName: "dir"))
    var snapshot: String?

    func validate() throws {
        for name in container {
            if let problem = StorageNames.containerProblem(name) ?? ReservedNames.containerProblem(name) {
                throw ValidationError("--container '\(name)': \(problem)")
            }
        }
        for name in table {
            if let problem = StorageNames.tableProblem(name) ?? ReservedNames.tableProblem(name) {
                throw ValidationError("--table '\(name)': \(problem)")
            }
        }
        if target.shard != nil || target.shards != nil { throw ValidationError("scan reads the whole account; drop --shard and --shards") }
        if snapshot != nil, target.namesAnAccount || target.dataDir != nil {
            throw ValidationError(
                "--snapshot scans a folder; drop the storage options (--connection-string, --account-name, --blob-endpoint, --table-endpoint, --sas-token, --data-dir)"
            )
        }
        // Scanning reads: an embedded folder that does not exist is a mistyped one, not a
        // storage to create. (Checked while parsing, on the main thread: a stat blocks.)
        if snapshot == nil, try target.namedAccount() == nil, !FileManager.default.fileExists(atPath: target.dataDirectory.path) {
            throw ValidationError(
                "\(target.dataDirectory.relativePath) holds no embedded storage; pass the --data-dir that 'azseed apply' used, or name an account")
        }
        guard (1...10_000).contains(sample) else { throw ValidationError("--sample is 1 to 10000 entities per partition, not \(sample)") }
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw ValidationError("--name '\(name)': letters, digits, - and _ only")
        }
    }

    func run() async throws {
        let output = URL(fileURLWithPath: out)
        var options = ScanOptions(
            containers: container.isEmpty ? nil : container, tables: table.isEmpty ? nil : table,
            sample: sample, copyBlobs: copyBlobs, name: name)
        options.copyValues = copyValues
        options.names = .flags
        let report: ScanReport
        if let snapshot {
            report = try await scanSnapshot(URL(fileURLWithPath: snapshot), options, storageFolder: target.dataDirectory, into: output)
        } else {
            let resolved = try await target.resolve()
            let observer = ConsoleObserver(target: resolved, readingLabel: "scanning")
            report = try await scanAccount(options, of: resolved, storageFolder: target.dataDirectory, into: output, observer: observer)
            observer.finish()
        }
        var lines = [
            "Scanned \(report.containers) container(s) with \(report.blobs) blob(s) and \(report.tables) table(s) with \(report.entities) entities in \(report.partitions) partition(s)."
        ]
        if !report.summary.isEmpty { lines.append("Inferred:") }
        // The account's names and keys in them, as text that cannot move the cursor or reorder
        // the line (controls, U+2028, bidirectional overrides escaped).
        lines += report.summary.map { "  \(Printable.escaped($0, quotes: false))" }
        if !report.skippedBlobs.isEmpty {
            lines.append(
                "Left out \(report.skippedBlobs.count) blob(s) whose names cannot be files of a dataset folder"
                    // A blob's name may be personal (an address, a salary): named only when values may be copied.
                    + (copyValues
                        ? ": \(report.skippedBlobs.prefix(5).map { Printable.escaped($0) }.joined(separator: ", "))"
                        : " (names not shown without --copy-values)")
            )
        }
        if copyBlobs { lines.append("Copied \(report.bytesCopied) bytes of blobs.") }
        lines.append(
            "Fidelity: generated again at the observed counts, \(report.fidelityCompared) properties compared, \(report.fidelityFlags.count) flagged (\(out)/fidelity.md)\(report.fidelityFlags.isEmpty ? "." : ":")"
        )
        lines += report.fidelityFlags.prefix(20).map { "  ✗ \($0)" }
        if report.fidelityFlags.count > 20 { lines.append("  … and \(report.fidelityFlags.count - 20) more in fidelity.md") }
        lines.append("Wrote \(out)/dataset.yaml. Next: azseed generate --dataset \(out) --out DIR, or azseed plan --dataset \(out)")
        Console.print(lines.joined(separator: "\n") + "\n")
    }
}
