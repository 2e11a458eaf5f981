import Foundation

/// Lines for people: notes on stderr, and whether stdout/stderr are terminals.
enum Console {
    static func note(_ text: String) {
        FileHandle.standardError.write(Data("azseed: \(text)\n".utf8))
    }

    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Colour only on a terminal, and never when NO_COLOR is set.
    static var colour: Bool { stdoutIsTerminal && ProcessInfo.processInfo.environment["NO_COLOR"] == nil }

    static func print(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
