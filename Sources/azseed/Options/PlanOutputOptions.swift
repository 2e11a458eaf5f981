import ArgumentParser
import Foundation
import SeedKit

/// How a plan is shown and saved.
struct PlanOutputOptions: ParsableArguments {
    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

    @Option(help: "How to print the plan: text (a diff) or json.")
    var output: Format = .text

    @Option(help: ArgumentHelp("Also save the plan as JSON to this file (for 'azseed apply --plan FILE').", valueName: "file"))
    var out: String?

    @Flag(help: "Exit 0 when there are no changes and 2 when there are.")
    var detailedExitcode = false

    /// Whether the plan is printed or saved as JSON (and so needs its digests).
    var writesJSON: Bool { output == .json || out != nil }

    /// Prints the plan and saves it when asked.
    func emit(_ plan: Plan) throws {
        // The JSON is made once, for printing and saving alike.
        let json = output == .json || out != nil ? plan.json().pretty() : ""
        switch output {
        case .text: Console.print(PlanTextRenderer(colour: Console.colour).render(plan))
        case .json: Console.print(json)
        }
        if let out {
            do {
                try Data(json.utf8).write(to: URL(fileURLWithPath: out), options: .atomic)
            } catch {
                throw RunFailure("cannot save the plan to \(out): \(FileProblem.describe(error)); check the folder exists and is writable")
            }
            if output == .text { Console.print("Saved the plan to \(out); apply exactly it with: azseed apply --plan \(out)\n") }
        }
    }

    /// A dry run's end: prints (and saves) the plan, then with `--detailed-exitcode` exits 2
    /// when it changes something.
    func finishDryRun(_ plan: Plan) throws {
        try emit(plan)
        if detailedExitcode && !plan.isEmpty { throw ExitCode(2) }
    }
}

/// A command failure already phrased for the user (exit 1).
struct RunFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
