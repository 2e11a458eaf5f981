import ArgumentParser
import AzureStorage
import Foundation

/// The `azseed` command tree. Commands parse flags, call SeedKit, and print.
struct Azseed: AsyncParsableCommand {
    /// azseed's version; `--version` adds the commit it was built from.
    static let version = "0.2.0"

    static let configuration = CommandConfiguration(
        commandName: "azseed",
        abstract: "Seed and migrate Azure Storage (Blob + Table) reproducibly.",
        discussion: """
            Datasets are data: a folder with a dataset.yaml ('azseed init DIR' writes one to start from, \
            'azseed scan' one from an account); the default, SpeakEasy, is built in. \
            Same dataset files + same seed + same window = byte-identical output.
            """,
        version: "\(version) (commit \(BuildInfo.commit))",
        subcommands: [
            InitCommand.self, ScanCommand.self, PlanCommand.self, ApplyCommand.self, VerifyCommand.self, ResetCommand.self, ExportCommand.self,
            ImportCommand.self, CopyCommand.self, SnapshotCommand.self, GenerateCommand.self, EmulatorCommand.self, PortraitsCommand.self,
            SignRequestsCommand.self, MigrateCommand.self,
        ]
    )
}

@main
enum Main {
    /// Request-log and progress lines still queued are written before the process ends (the
    /// wait is on a blocking thread, not the pool).
    static func drainLogs() async {
        _ = try? await BlockingPool.run { LineWriter.shared.drain() }
    }

    static func main() async {
        _ = Console.started  // the clock of JSON results starts with the process, not on first use
        do {
            var command = try Azseed.parseAsRoot()
            if command is EmulatorCommand, var emulator = command as? AsyncParsableCommand {
                try await emulator.run()  // it stops gracefully on SIGINT/SIGTERM itself
            } else if let asyncCommand = command as? AsyncParsableCommand {
                // Run as a task that Ctrl-C cancels (``Interruption``).
                nonisolated(unsafe) var running = asyncCommand
                let task = Task { try await running.run() }
                Interruption.install { task.cancel() }
                try await task.value
                // A command that finished its work after a signal (planning does not stop at
                // once) still ends as an interrupted one: 130 and its one line, never 0.
                if Interruption.happened { throw CancellationError() }
            } else {
                try command.run()
            }
            Console.releaseNotes()
            await drainLogs()
        } catch {
            // A failure is its one error line; an exit code a command chose (`--detailed-exitcode`)
            // or an interruption is not a failure of that kind: its notes are shown.
            if error is ExitCode || Interruption.happened { Console.releaseNotes() } else { Console.dropNotes() }
            await drainLogs()
            if Interruption.happened {
                LineWriter.shared.write(Array((Failure.lineStart + Interruption.message + "\n").utf8), to: STDERR_FILENO)
                LineWriter.shared.drain()
                exit(130)
            }
            Failure.exit(with: error)
        }
    }
}
