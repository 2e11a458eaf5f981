import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// `azseed import DIR`: a snapshot becomes the desired state, planned and applied like a dataset.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Make the target hold a snapshot (from 'azseed export' or 'azseed generate'): plan, then apply.",
        discussion: "Every file is checked against the manifest first; a changed or truncated snapshot is refused before anything is written."
    )

    @Argument(help: ArgumentHelp("The snapshot folder.", valueName: "dir"))
    var snapshot: String

    @OptionGroup var target: TargetOptions
    @OptionGroup var outputOptions: PlanOutputOptions

    @Flag(help: "Only show the plan.")
    var dryRun = false

    @Flag(help: "Also delete blobs and entities of the snapshot's containers and partitions that it does not hold.")
    var prune = false

    @OptionGroup var execution: ExecutionOptions

    func run() async throws {
        let folder = URL(fileURLWithPath: snapshot)
        let target = try await self.target.resolve()
        if let directory = target.embeddedDataDirectory {
            // The embedded storage must not open its folder inside the snapshot (or around it).
            try FolderOverlap.check(output: directory, flag: "--data-dir", inputs: [("the snapshot", folder)])
        }
        // Reads and hashes every file of the snapshot: on the blocking threads, not the pool.
        let read = try await BlockingPool.run { try SnapshotReader.read(folder) }
        if prune && !dryRun { try Safety.confirmDeletes("--prune", target: target, yes: execution.yes) }
        try await StorageSession.opened(target) { session in
            let header = PlanHeader(
                target: session.run.target, source: .snapshot, dataset: read.dataset ?? "snapshot",
                datasetDirectory: folder.standardizedFileURL.path, seed: read.seed, window: read.window,
                counts: [:], access: nil, prune: prune)
            Console.note(
                "snapshot \(snapshot): \(read.containers.map { "\($0.blobs.count) blobs in \($0.name)" }.joined(separator: ", ")), \(read.tables.map { "\($0.entityCount) entities in \($0.name)" }.joined(separator: ", "))"
            )
            let plan = try await Planning.plan(read.storage, header: header, in: session, digests: outputOptions.writesJSON)
            if dryRun {
                try await outputOptions.finishDryRun(plan)
                return
            }
            try await Applying.execute(plan, in: session, concurrency: execution.concurrency, output: outputOptions, command: "import")
        }
    }
}
