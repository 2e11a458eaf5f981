import Foundation

/// The account signed in with `az login`: runs `az account get-access-token --output json
/// --resource https://storage.azure.com` and reads `accessToken` with `expires_on` (epoch
/// seconds) or, from older CLIs, `expiresOn` (local time). Not signed in, or no `az` on
/// `PATH`, makes it unavailable.
public struct AzureCLICredential: TokenCredential {
    public let name = "Azure CLI"
    let executable: String
    let tenantID: String?
    let environment: [String: String]

    /// The `az` found on `PATH` in `environment`, nil when there is none.
    public static func find(in environment: [String: String]) -> String? {
        for folder in (environment["PATH"] ?? "").split(separator: ":") {
            let path = "\(folder)/az"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    public init(executable: String, tenantID: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.executable = executable
        self.tenantID = tenantID
        self.environment = environment
    }

    /// Where the timeout that ends a hung `az` fires (it only signals the process).
    private static let timers = DispatchQueue(label: "azseed.az-timeout")

    /// How long `az` may take (it starts a Python interpreter).
    static let timeout: TimeInterval = 30

    public func token(scope: String) async throws -> AccessToken {
        let arguments =
            ["account", "get-access-token", "--output", "json", "--resource", StorageScope.resource(of: scope)]
            + (tenantID.map { ["--tenant", $0] } ?? [])
        let (executable, environment, name) = (self.executable, self.environment, self.name)
        // Starting and waiting for a process blocks: on BlockingPool's threads, never the
        // cooperative pool.
        let (status, output, errors) = try await BlockingPool.run { try Self.run(executable, arguments, environment: environment) }
        guard status == 0 else {
            let firstLine =
                errors.split(whereSeparator: \.isNewline).first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map(String.init)
                ?? "exit status \(status)"
            if errors.contains("az login") || errors.contains("az account set") {
                throw CredentialUnavailable("Azure CLI: not signed in (\(SecretRedaction.redact(firstLine)))")
            }
            throw AzureStorageError.credential(name, "'az account get-access-token' failed: \(firstLine)")
        }
        guard let json = try? JSONParser.parse(Array(output.utf8)), let token = json["accessToken"]?.stringValue, !token.isEmpty else {
            throw AzureStorageError.credential(name, "'az account get-access-token' printed no accessToken")
        }
        if case .number(let text)? = json["expires_on"], let seconds = Double(text) {
            return AccessToken(token: token, expiresOn: Date(timeIntervalSince1970: seconds))
        }
        if let text = json["expires_on"]?.stringValue, let seconds = Double(text) {
            return AccessToken(token: token, expiresOn: Date(timeIntervalSince1970: seconds))
        }
        if let local = json["expiresOn"]?.stringValue, let date = Self.localTime(local) {
            return AccessToken(token: token, expiresOn: date)
        }
        throw AzureStorageError.credential(name, "'az account get-access-token' printed no expires_on or expiresOn")
    }

    /// Older CLIs' `expiresOn`: a naive local time, `2026-11-25 12:34:56.000000`.
    static func localTime(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = text.contains(".") ? "yyyy-MM-dd HH:mm:ss.SSSSSS" : "yyyy-MM-dd HH:mm:ss"
        return formatter.date(from: text)
    }

    /// Runs `az` to the end (killed after ``timeout``); stderr goes to a temporary file so a
    /// full pipe cannot stall it.
    private static func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("azseed-az-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let errorHandle = try FileHandle(forWritingTo: errorFile)
        defer { try? errorHandle.close() }
        process.standardOutput = output
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw CredentialUnavailable("Azure CLI: \(executable) cannot be started")
        }
        let deadline = DispatchWorkItem { if process.isRunning { process.terminate() } }
        // The timer runs on a queue of its own, not Dispatch's global ones.
        Self.timers.asyncAfter(deadline: .now() + timeout, execute: deadline)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        deadline.cancel()
        let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        return (process.terminationStatus, String(decoding: data, as: UTF8.self), errors)
    }
}
