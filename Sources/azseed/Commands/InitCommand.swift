import ArgumentParser
import AzureStorage
import Foundation
import SeedKit

/// `azseed init [DIR]`: a dataset folder to start from.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write an example dataset folder (dataset.yaml, templates, images) to start from.",
        discussion: "The folder must be new or empty. Then: azseed plan --dataset DIR, azseed apply --dataset DIR."
    )

    @Argument(help: ArgumentHelp("The folder to write (new or empty).", valueName: "dir"))
    var directory: String = "."

    @Option(help: ArgumentHelp("Which example: speakeasy (speakers, photos, events) or chat (rooms, users, messages).", valueName: "name"))
    var example: DatasetExample = .speakeasy

    func run() async throws {
        let folder = URL(fileURLWithPath: directory)
        let (example, shown) = (self.example, directory)
        // File writes block: on BlockingPool's threads, not the cooperative pool.
        let written = try await BlockingPool.run { try example.write(to: folder) }
        var lines = ["Wrote the \(example.rawValue) dataset into \(shown):"]
        lines += written.map { "  \($0)" }
        lines.append("Next: azseed plan --dataset \(shown)   (then apply; 'azseed generate --dataset \(shown) --out DIR' writes it without storage)")
        print(lines.joined(separator: "\n"))
    }
}

extension DatasetExample: ExpressibleByArgument {}
