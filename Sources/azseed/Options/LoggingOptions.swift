import ArgumentParser
import AzureStorage
import Foundation

/// `--verbose` and `--log-file`: every request on stderr and as JSON lines in a file. Shared by
/// the storage commands (each attempt the client sends) and `azseed emulator` (each request it answers).
struct LoggingOptions: ParsableArguments {
    @Flag(
        name: .shortAndLong,
        help:
            "Print one line per request on stderr: method, URL (a SAS's signature redacted), status, error code, bytes, milliseconds, attempt and why it was retried."
    )
    var verbose = false

    @Option(help: ArgumentHelp("Append the same as JSON lines to this file (flushed line by line).", valueName: "file"))
    var logFile: String?

    /// The log the flags ask for; nil when neither is given. The file is opened on the blocking
    /// threads (an open can wait on a slow disk), never on the cooperative pool.
    func makeLog() async throws -> RequestLog? {
        guard verbose || logFile != nil else { return nil }
        Console.requestLinesOnStderr.store(verbose, ordering: .relaxed)
        var fd: Int32?
        if let logFile {
            do { fd = try await BlockingPool.run { try RequestLog.openAppending(logFile) } } catch let error as AzureStorageError {
                throw ValidationError("--log-file \(error.message)")
            }
        }
        return RequestLog(verbose: verbose, file: fd)
    }
}
