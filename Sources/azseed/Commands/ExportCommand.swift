import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// `azseed export --out DIR`: a snapshot of the target's container and table.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Snapshot the target's container and table (every blob, every entity of every partition) to a folder.",
        discussion: "The folder has the format 'azseed generate' writes, so 'azseed import' takes either."
    )

    @OptionGroup var target: TargetOptions

    @OptionGroup var folder: OutputFolderOptions

    @Option(help: ArgumentHelp("The dataset whose container and table names are exported (default: SpeakEasy).", valueName: "dir"))
    var dataset: String?

    @Option(help: ArgumentHelp("A container to export instead of the dataset's (repeatable).", valueName: "name"))
    var container: [String] = []

    @Option(help: ArgumentHelp("A table to export instead of the dataset's (repeatable).", valueName: "name"))
    var table: [String] = []

    @Option(
        help: ArgumentHelp(
            "With --shard/--shards: the name the N processes of one export share (default: $AZSEED_EXPORT_ID); 'snapshot merge' joins only parts of one export.",
            valueName: "id"))
    var exportId: String?

    @Option(help: "How to print: text (a summary line) or json (one result document: blobs, bytes and entities per table written, seconds, retries).")
    var output: PlanOutputOptions.Format = .text

    func validate() throws {
        if let exportId,
            exportId.isEmpty || exportId.utf8.count > 128 || !exportId.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0.value < 127 })
        {
            throw ValidationError("--export-id: 1 to 128 printable ASCII characters without spaces")
        }
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
    }

    func run() async throws {
        let target = try await self.target.resolve(readOnly: true)
        let exportID = exportId ?? ProcessInfo.processInfo.environment["AZSEED_EXPORT_ID"].flatMap { $0.isEmpty ? nil : $0 }
        if target.shard == nil, exportId != nil {
            throw ValidationError("--export-id names the parts of a sharded export; add --shard I/N (or --shards N), or drop it")
        }
        if target.shard != nil, exportID == nil {
            throw ValidationError(
                "export --shard needs --export-id ID (or $AZSEED_EXPORT_ID): the processes of one export name it alike, so 'snapshot merge' can tell their parts from another export's"
            )
        }
        let request = ExportRequest(
            containers: container, tables: table, dataset: dataset.map { URL(fileURLWithPath: $0) }, storageFolder: self.target.dataDirectory,
            out: URL(fileURLWithPath: folder.out), force: folder.force, exportID: exportID)
        let observer = ConsoleObserver(target: target, readingLabel: "exporting")
        let exported = try await exportSnapshot(request, from: target, observer: observer)
        observer.finish()
        let (summary, activity, planTarget, shard) = (exported.summary, exported.activity, exported.target, exported.shard)
        if output == .json {
            var result = RunResult(
                command: "export", target: planTarget, shard: shard, seconds: Date().timeIntervalSince(Console.started), activity: activity)
            let blobs: JSONValue = .object([("count", .number(String(summary.blobs))), ("bytes", .number(String(summary.blobBytes)))])
            let entities: [JSONValue] = summary.entities.map { .object([("table", .string($0.table)), ("count", .number(String($0.count)))]) }
            result.extra = [("out", .string(folder.out)), ("blobs", blobs), ("entities", .array(entities))]
            Console.print(result.json().pretty())
            return
        }
        let entities = summary.entities.map { "\($0.count) entities of \($0.table)" }.joined(separator: ", ")
        Console.print(
            "Exported to \(folder.out): \(summary.blobs) blob\(summary.blobs == 1 ? "" : "s") (\(summary.blobBytes) bytes), \(entities) in \(String(format: "%.2f", summary.seconds)) s\n"
        )
    }
}
