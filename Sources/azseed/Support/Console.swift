import AzureStorage
import Foundation
import Synchronization

/// Lines for people: notes on stderr, and whether stdout/stderr are terminals.
///
/// Everything goes through ``LineWriter``: its thread does the (blocking) writes, never the
/// caller's, and in the order they were asked for across stdout and stderr — so a progress
/// line's clearing, a request-log line and the summary after it never cross on a terminal.
/// The process drains it before it exits (`Main`).
enum Console {
    static func note(_ text: String) {
        LineWriter.shared.write(Array("azseed: \(text)\n".utf8), to: STDERR_FILENO)
    }

    /// Text on stderr as it is (a summary moved off stdout by `--output json`).
    static func printError(_ text: String) {
        LineWriter.shared.write(Array(text.utf8), to: STDERR_FILENO)
    }

    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Colour only on a terminal, and never when NO_COLOR is set.
    static var colour: Bool { stdoutIsTerminal && ProcessInfo.processInfo.environment["NO_COLOR"] == nil }

    static func print(_ text: String) {
        LineWriter.shared.write(Array(text.utf8), to: STDOUT_FILENO)
    }

    /// Whether `--verbose` prints request lines on stderr: progress is then printed as plain
    /// lines rather than redrawn in place, which request lines would break up.
    static let requestLinesOnStderr = Atomic<Bool>(false)

    /// When this run began: the `seconds` of a JSON result.
    static let started = Date()
}
