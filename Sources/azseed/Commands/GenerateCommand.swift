import ArgumentParser
import Foundation
import AzureStorage
import SeedKit

/// `azseed generate --out DIR`: the desired state as a snapshot, with no storage needed.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write the dataset's desired state as a snapshot folder (no storage needed).",
        discussion: "The folder holds manifest.json, tables/<table>.jsonl and blobs/<container>/<name>; its bytes depend only on the dataset files, the seed and the window."
    )

    @OptionGroup var datasetOptions: DatasetOptions

    @OptionGroup var folder: OutputFolderOptions

    @Option(help: ArgumentHelp("The blob endpoint that blob URLs point into.", valueName: "url"))
    var blobEndpoint: String = "http://127.0.0.1:10000/devstoreaccount1"

    func validate() throws {
        guard let url = URL(string: blobEndpoint), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("--blob-endpoint must be an http(s) URL, not '\(SecretRedaction.redact(blobEndpoint))'")
        }
    }

    func run() async throws {
        let dataset = try Dataset.load(directory: datasetOptions.datasetDirectory)
        try FolderOverlap.check(output: URL(fileURLWithPath: folder.out), inputs: dataset.inputFolders)
        try FolderOverlap.checkNoDataFolder(output: URL(fileURLWithPath: folder.out))
        let endpoint = blobEndpoint.hasSuffix("/") ? String(blobEndpoint.dropLast()) : blobEndpoint
        let state = try GeneratedDataset.make(dataset, options: try datasetOptions.generationOptions(blobEndpoint: endpoint))
        let started = Date()
        let summary = try SnapshotWriter.write(state, to: URL(fileURLWithPath: folder.out), force: folder.force)
        let seconds = Date().timeIntervalSince(started)
        let tables = summary.entities.map { "\($0.count) entities in \($0.table)" }.joined(separator: ", ")
        print("Dataset \(dataset.name), seed \(state.seed), window \(state.window.from.shortISO8601) to \(state.window.to.shortISO8601)")
        print("Wrote \(folder.out): \(summary.blobs) blobs (\(summary.blobBytes) bytes), \(tables) in \(String(format: "%.2f", seconds)) s")
    }
}
