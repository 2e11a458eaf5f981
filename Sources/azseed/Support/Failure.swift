import ArgumentParser
import Foundation
import AzureStorage
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
            message = e.message
        case let e as DatasetError:
            code = 1
            message = e.description
        case let e as ConnectionStringError:
            code = 64
            message = "\(e); fix it or unset \(ConnectionString.environmentVariable)"
        case let e as RunError:
            code = 1
            message = e.description
        case let e as RunFailure:
            code = 1
            message = e.description
        case let e as PlanFileError:
            code = 1
            message = e.description
        case let e as EmulatorStartError:
            code = 1
            message = e.description
        case let e as ExitCode:
            Foundation.exit(e.rawValue)
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
        let oneLine = message.split(whereSeparator: \.isNewline).joined(separator: " ")
        FileHandle.standardError.write(Data("azseed: error: \(oneLine)\n".utf8))
        Foundation.exit(code)
    }
}
