import ArgumentParser
import Foundation
import SeedKit

/// Draws the placeholder portraits shipped in `Seeds/speakeasy/images` (a maintainer tool).
struct PortraitsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "portraits",
        abstract: "Draw deterministic placeholder portraits as JPEG files.",
        shouldDisplay: false
    )

    @Option(help: "The folder to write into.")
    var out: String

    @Argument(help: ArgumentHelp("Portraits to draw, as \"Full Name=file.jpg\", in colour order.", valueName: "name=file"))
    var portraits: [String]

    func run() throws {
        for (index, item) in portraits.enumerated() {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ValidationError("expected \"Full Name=file.jpg\", not '\(item)'") }
            let bytes = try Portrait.jpeg(name: parts[0], index: index)
            try Data(bytes).write(to: URL(fileURLWithPath: out).appendingPathComponent(parts[1]))
            print("\(parts[1]): \(bytes.count) bytes")
        }
    }
}
