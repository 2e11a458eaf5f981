import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// `azseed generate --out DIR`: the desired state as a snapshot, with no storage needed.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write the dataset's desired state as a snapshot folder (no storage needed).",
        discussion:
            "The folder holds manifest.json, tables/<table>.jsonl and blobs/<container>/<name>; its bytes depend only on the dataset files, the seed and the window."
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
        let made = try await generateFixture(
            try datasetOptions.request(), blobEndpoint: blobEndpoint, to: URL(fileURLWithPath: folder.out), force: folder.force)
        let tables = made.summary.entities.map { "\($0.count) entities in \($0.table)" }.joined(separator: ", ")
        Console.print(
            "Dataset \(Printable.escaped(made.dataset)), seed \(made.seed), window \(made.window.from.shortISO8601) to \(made.window.to.shortISO8601)\n"
        )
        Console.print(
            "Wrote \(folder.out): \(made.summary.blobs) blobs (\(made.summary.blobBytes) bytes), \(tables) in \(String(format: "%.2f", made.seconds)) s\n"
        )
    }
}
