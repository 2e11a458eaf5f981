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
        for name in container { if let problem = StorageNames.containerProblem(name) { throw ValidationError("--container '\(name)': \(problem)") } }
        for name in table {
            if let problem = StorageNames.tableProblem(name) ?? ReservedNames.tableProblem(name) {
                throw ValidationError("--table '\(name)': \(problem)")
            }
        }
    }

    private static func once(_ names: [String]) -> [String] {
        var seen: Set<ExactString> = []
        return names.filter { seen.insert(ExactString($0)).inserted }
    }

    func run() async throws {
        var datasetName: String?
        // A name given twice is exported once.
        var containers = Self.once(container)
        var tables = Self.once(table)
        // The embedded storage's folder is an input even with a connection string: an
        // 'azseed emulator' may be serving it.
        let target = try await self.target.resolve()
        var inputs: [(what: String, folder: URL)] = [("the storage's data folder", self.target.dataDirectory)]
        if containers.isEmpty || tables.isEmpty || dataset != nil {
            let loaded = try Dataset.load(directory: try dataset.map { URL(fileURLWithPath: $0) } ?? DatasetLocator.defaultDataset())
            datasetName = loaded.name
            inputs += loaded.inputFolders
            if containers.isEmpty { containers = loaded.containers.map(\.name) }
            if tables.isEmpty { tables = loaded.tables.map(\.name) }
        }
        let exportID = exportId ?? ProcessInfo.processInfo.environment["AZSEED_EXPORT_ID"].flatMap { $0.isEmpty ? nil : $0 }
        if target.shard == nil, exportId != nil {
            throw ValidationError("--export-id names the parts of a sharded export; add --shard I/N (or --shards N), or drop it")
        }
        if target.shard != nil, exportID == nil {
            throw ValidationError(
                "export --shard needs --export-id ID (or $AZSEED_EXPORT_ID): the processes of one export name it alike, so 'snapshot merge' can tell their parts from another export's"
            )
        }
        try FolderOverlap.check(output: URL(fileURLWithPath: folder.out), inputs: inputs)
        try FolderOverlap.checkNoDataFolder(output: URL(fileURLWithPath: folder.out))
        let out = URL(fileURLWithPath: folder.out)
        let force = folder.force
        let (summary, activity, planTarget, shard): (SnapshotSummary, RequestActivity, PlanTarget, Shard?) = try await StorageSession.opened(target) {
            session in
            let bar = ProgressBar(label: "exporting", activity: session.run.configuration.activity)
            defer { bar.finish() }
            let started = Date()
            var exporter = Exporter(run: session.run)
            exporter.exportID = exportID
            var summary = try await exporter.export(containers: containers, tables: tables, dataset: datasetName, to: out, force: force) {
                bar.update(done: $0, total: nil)
            }
            summary.seconds = Date().timeIntervalSince(started)
            return (summary, session.run.configuration.activity, session.run.target, session.run.shard)
        }
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
            "Exported to \(folder.out): \(summary.blobs) blobs (\(summary.blobBytes) bytes), \(entities) in \(String(format: "%.2f", summary.seconds)) s\n"
        )
    }
}
