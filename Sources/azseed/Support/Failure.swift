import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import StorageEmulator

/// Turns any error into one line on stderr and the documented exit code: 64 for usage
/// errors, 1 for everything else. Help and version requests print as usual.
enum Failure {
    /// What a last line on stderr starts with: on a terminal, the return and erase that take
    /// away a progress line drawn in place (else the line was glued onto it, as a new user saw
    /// after Ctrl-C); nothing on a pipe or a file.
    static var lineStart: String { isatty(STDERR_FILENO) != 0 ? "\r\u{1B}[2K" : "" }

    static func exit(with error: Error) -> Never {
        if let e = error as? ExitCode { Foundation.exit(e.rawValue) }
        // Help and version requests (the parser's, exit code 0) print as the parser prints them.
        if !describedAsIs(error), Azseed.exitCode(for: error) == .success { Azseed.exit(withError: error) }
        let (code, oneLine) = describe(error)
        FileHandle.standardError.write(Data("\(lineStart)azseed: error: \(oneLine)\n".utf8))
        Foundation.exit(code)
    }

    /// Whether ``describe(_:)`` phrases `error` itself rather than asking the parser.
    private static func describedAsIs(_ error: Error) -> Bool {
        if error is GenerationError || error is PersonFacingError { return true }
        if let e = error as? AzureStorageError, e.kind == .invalidConnectionString { return true }
        let ns = error as NSError
        return ns.domain == NSCocoaErrorDomain || ns.domain == NSPOSIXErrorDomain
    }

    /// The exit code and the one line an error is, as the user reads it (a target's failure in
    /// a `--targets` run too): secrets redacted, control characters escaped.
    static func describe(_ error: Error) -> (code: Int32, line: String) {
        let code: Int32
        let message: String
        switch error {
        case let e as GenerationError:
            code = e.isUsage ? 64 : 1
            message = e.message.rendered(.flags)
        case let e as AzureStorageError where e.kind == .invalidConnectionString:
            // A flag's connection string is checked as a usage error; this one is the variable's.
            code = 64
            message = "\(e); fix it or unset \(ConnectionString.environmentVariable)"
        case is PersonFacingError:
            // Already phrased for the user: what failed, where, what to do.
            code = 1
            message = spelled(error)
        case let e as NSError where e.domain == NSCocoaErrorDomain || e.domain == NSPOSIXErrorDomain:
            // Foundation's own text names domains and codes; say what failed instead.
            code = 1
            message = "a file operation failed: \(FileProblem.describe(e)); check the paths you gave and their permissions"
        default:
            let parserCode = Azseed.exitCode(for: error)
            if parserCode.rawValue == 64 || error is ValidationError {
                code = 64
                let text = Azseed.message(for: error)
                message = text + CommandSuggestion.hint(for: text, arguments: Array(CommandLine.arguments.dropFirst())) + " (see 'azseed help')"
            } else {
                code = parserCode.rawValue == 0 ? 1 : parserCode.rawValue
                message = "\(error)"
            }
        }
        // Whatever the message echoes, a URL's query (a SAS) or user-info never comes out.
        // …and no control character from a far end (an error code) drives the terminal.
        return (code, Printable.escaped(SecretRedaction.redact(message.split(whereSeparator: \.isNewline).joined(separator: " ")), quotes: false))
    }
}
