import Foundation

/// What a finished process left: its exit status and everything it printed.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Bytes handed from the draining thread to the waiting one (the semaphore orders them).
private final class Drained: @unchecked Sendable {
    var data = Data()
}

/// Child processes for tests: a command run to its end, and helper servers.
public enum Processes {
    /// Runs `executable` with `arguments` (in `directory`, if given) and waits for it.
    public static func run(_ executable: URL, _ arguments: [String], in directory: URL? = nil) throws -> ProcessResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // stderr is drained on its own thread while stdout is read here, so a child that
        // fills one pipe cannot block on it.
        let stderrData = Drained()
        let drained = DispatchSemaphore(value: 0)
        Thread {
            stderrData.data = err.fileHandleForReading.readDataToEndOfFile()
            drained.signal()
        }.start()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        let stderr = stderrData.data
        process.waitUntilExit()
        return ProcessResult(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// A Python server started for a test: it prints its port on the first line and exits
    /// when its stdin closes (``stop()``) — a signal did not always end it.
    public final class HelperServer: Sendable {
        public let port: Int
        private let process: Process
        private let stdin: Pipe

        init(port: Int, process: Process, stdin: Pipe) {
            self.port = port
            self.process = process
            self.stdin = stdin
        }

        /// Closes the server's stdin and waits for it to exit.
        public func stop() {
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    /// Starts `python3` on `script`, which must print its port and serve; the server exits
    /// when its stdin closes.
    public static func startPythonServer(_ script: String) throws -> HelperServer {
        let watchdog = "import os, sys, threading\nthreading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()\n"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", watchdog + script]
        let out = Pipe()
        let stdin = Pipe()
        process.standardOutput = out
        process.standardInput = stdin
        try process.run()
        var portText = ""
        while !portText.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            portText += String(decoding: chunk, as: UTF8.self)
        }
        guard let port = Int(portText.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
            throw CocoaError(.fileReadCorruptFile)
        }
        return HelperServer(port: port, process: process, stdin: stdin)
    }
}
