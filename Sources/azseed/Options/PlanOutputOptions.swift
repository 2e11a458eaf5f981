import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// How a plan is shown and saved.
struct PlanOutputOptions: ParsableArguments {
    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

    @Option(
        help:
            "How to print: text (the plan as a diff, then a summary) or json (for a dry run, the plan; after a run, one result document: what was done, counts per kind and action, bytes, seconds, retries)."
    )
    var output: Format = .text

    @Option(help: ArgumentHelp("Also save the plan as JSON to this file (for 'azseed apply --plan FILE').", valueName: "file"))
    var out: String?

    @Flag(help: "Exit 0 when there are no changes and 2 when there are: for a dry run changes to make, after a run changes made.")
    var detailedExitcode = false

    /// Whether the plan is printed or saved as JSON (and so needs its digests).
    var writesJSON: Bool { output == .json || out != nil }

    /// How much of a plan to hold: a JSON plan lists every action; text lists the first
    /// creates and deletes of each kind, so a large plan holds only those (flat memory).
    /// `printsPlan` false: the JSON printed is a run's result (counts), not the plan, so only
    /// a saved plan needs every action.
    func retention(printsPlan: Bool = true) -> PlanRetention { out != nil || (output == .json && printsPlan) ? .whole : .text }

    /// Prints the plan and saves it when asked. JSON is written as it is encoded, an
    /// action at a time (``Plan/writeJSON(_:)``), on ``BlockingPool``'s threads: file and
    /// pipe writes block.
    /// `printJSON` false: a JSON plan is only saved (the command prints its result instead).
    func emit(_ plan: Plan, printJSON: Bool = true) async throws {
        if output == .text { Console.print(PlanTextRenderer(colour: Console.colour, names: .flags).render(plan)) }
        if let out {
            try await BlockingPool.run { try Self.save(plan, to: out) }
            if output == .text { Console.print("Saved the plan to \(out); apply exactly it with: azseed apply --plan \(out)\n") }
        }
        if output == .json && printJSON {
            // Lines queued before (notes) are written first; the plan is written straight out.
            try await BlockingPool.run {
                LineWriter.shared.drain()
                plan.writeJSON { FileHandle.standardOutput.write(Data($0)) }
            }
        }
    }

    /// Writes the plan's JSON to a temporary file beside `path`, then renames it into place:
    /// a plan file is whole or absent.
    private static func save(_ plan: Plan, to path: String) throws {
        do {
            try AtomicFile.write(URL(fileURLWithPath: path)) { write in try plan.writeJSON { try write($0) } }
        } catch {
            throw RunError("cannot save the plan to \(path): \(FileProblem.describe(error)); check the folder exists and is writable")
        }
    }

    /// A dry run's end: prints (and saves) the plan, then with `--detailed-exitcode` exits 2
    /// when it changes something.
    func finishDryRun(_ plan: Plan) async throws {
        try await emit(plan)
        if detailedExitcode && !plan.isEmpty { throw ExitCode(2) }
    }
}
