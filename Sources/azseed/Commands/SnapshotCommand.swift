import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// `azseed snapshot merge`: snapshot folders' own operations.
struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Work on snapshot folders.",
        subcommands: [SnapshotMergeCommand.self]
    )
}

/// `azseed snapshot merge DIR… --out DIR`: the partial snapshots of a sharded export, joined.
struct SnapshotMergeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Join the partial snapshots of 'azseed export --shard I/N' into one, byte-identical to an unsharded export."
    )

    @Argument(help: ArgumentHelp("The partial snapshot folders, one for each shard.", valueName: "dir"))
    var folders: [String]

    @OptionGroup var folder: OutputFolderOptions

    func run() async throws {
        let summary = try await mergeSnapshots(folders.map { URL(fileURLWithPath: $0) }, into: URL(fileURLWithPath: folder.out), force: folder.force)
        let entities = summary.entities.map { "\($0.count) entities of \($0.table)" }.joined(separator: ", ")
        Console.print("Merged \(folders.count) shards into \(folder.out): \(summary.blobs) blobs (\(summary.blobBytes) bytes), \(entities)\n")
    }
}
