import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import StorageEmulator

/// Turns any error into one line on stderr and the documented exit code: 64 for usage
/// errors, 1 for everything else. Help and version requests print as usual.
enum Failure {
    static func exit(with error: Error) -> Never {
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
        case let e as ExitCode:
            Foundation.exit(e.rawValue)
        case let e as NSError where e.domain == NSCocoaErrorDomain || e.domain == NSPOSIXErrorDomain:
            // Foundation's own text names domains and codes; say what failed instead.
            code = 1
            message = "a file operation failed: \(FileProblem.describe(e)); check the paths you gave and their permissions"
        default:
            let parserCode = Azseed.exitCode(for: error)
            if parserCode == .success {
                Azseed.exit(withError: error)
            }
            if parserCode.rawValue == 64 || error is ValidationError {
                code = 64
                message = Azseed.message(for: error) + " (see 'azseed help')"
            } else {
                code = parserCode.rawValue == 0 ? 1 : parserCode.rawValue
                message = "\(error)"
            }
        }
        // Whatever the message echoes, a URL's query (a SAS) or user-info never comes out.
        // …and no control character from a far end (an error code) drives the terminal.
        let oneLine = Printable.escaped(SecretRedaction.redact(message.split(whereSeparator: \.isNewline).joined(separator: " ")), quotes: false)
        FileHandle.standardError.write(Data("azseed: error: \(oneLine)\n".utf8))
        Foundation.exit(code)
    }
}
