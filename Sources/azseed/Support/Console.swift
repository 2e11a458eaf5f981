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
        let line = Array("azseed: \(text)\n".utf8)
        let kept = held.withLock { lines -> Bool in
            guard lines != nil else { return false }
            lines!.append(line)
            return true
        }
        if !kept { LineWriter.shared.write(line, to: STDERR_FILENO) }
    }

    /// Notes held until a run is under way — its plan made, its first write, or its end — so a
    /// run that fails before prints its one error line alone, no note before it (issue 47).
    private static let held = Mutex<[[UInt8]]?>(nil)

    /// From now on notes wait for ``releaseNotes()`` (a use case's observer starts this).
    static func holdNotes() { held.withLock { if $0 == nil { $0 = [] } } }

    /// Prints the notes held, in order, and prints later ones at once.
    static func releaseNotes() {
        let lines = held.withLock { lines -> [[UInt8]] in
            defer { lines = nil }
            return lines ?? []
        }
        for line in lines { LineWriter.shared.write(line, to: STDERR_FILENO) }
    }

    /// Forgets the notes held: the run failed, and its error is the one line it prints.
    static func dropNotes() { held.withLock { $0 = nil } }

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
