import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import EmbeddedEmulator
import StorageEmulator
import Synchronization

/// Where a storage command works: `--connection-string`, else the environment variable,
/// else the embedded storage (the emulator started in-process over `--data-dir`).
struct TargetOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The storage account's connection string (default: $AZURE_STORAGE_CONNECTION_STRING, else the embedded storage).", valueName: "string"))
    var connectionString: String?

    @Option(help: ArgumentHelp("The embedded storage's folder, used when no connection string is given.", valueName: "dir"))
    var dataDir: String?

    @Option(help: ArgumentHelp("The account, for its public-cloud endpoints (instead of a connection string; with --sas-token).", valueName: "name"))
    var accountName: String?

    @Option(name: .customLong("blob-endpoint"), help: ArgumentHelp("The Blob endpoint URL, optionally with a SAS as its query (instead of a connection string).", valueName: "url"))
    var blobEndpointURL: String?

    @Option(name: .customLong("table-endpoint"), help: ArgumentHelp("The Table endpoint URL, optionally with a SAS as its query (instead of a connection string).", valueName: "url"))
    var tableEndpointURL: String?

    @Option(help: ArgumentHelp("A shared access signature for both services (with --account-name or the endpoints).", valueName: "token"))
    var sasToken: String?

    @Option(help: ArgumentHelp("How requests are authorised, as az names it: 'key' (the connection string's key or SAS; the default) or 'login' (a Microsoft Entra ID token from the environment's service principal, workload identity, managed identity or 'az login'); default: $AZURE_STORAGE_AUTH_MODE, else key.", valueName: "mode"))
    var authMode: AuthMode?

    enum AuthMode: String, ExpressibleByArgument, CaseIterable {
        case key, login
    }

    /// `--auth-mode`, else `AZURE_STORAGE_AUTH_MODE` (as az reads it), else key.
    private var effectiveAuthMode: AuthMode {
        get throws {
            if let authMode { return authMode }
            guard let text = ProcessInfo.processInfo.environment["AZURE_STORAGE_AUTH_MODE"], !text.isEmpty else { return .key }
            guard let mode = AuthMode(rawValue: text) else { throw ValidationError("AZURE_STORAGE_AUTH_MODE '\(text)' is not key or login") }
            return mode
        }
    }

    @Option(help: ArgumentHelp("Do part I of N of the work (0 ≤ I < N): entities by a hash of their keys, blobs by name; N processes with I = 0…N-1 together do what one does.", valueName: "I/N"))
    var shard: String?

    @Option(help: ArgumentHelp("Split the work N ways, this process's part from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job).", valueName: "N"))
    var shards: Int?

    /// The part of the work this process does: `--shard I/N`, or `--shards N` with the index
    /// from `JOB_COMPLETION_INDEX`; nil does all of it.
    var chosenShard: Shard? {
        get throws {
            if let shard {
                guard shards == nil else { throw ValidationError("--shard and --shards exclude each other; --shards takes the index from JOB_COMPLETION_INDEX") }
                guard let parsed = Shard(shard) else { throw ValidationError("--shard '\(shard)': give I/N with 0 ≤ I < N, such as 0/4") }
                return parsed.count > 1 ? parsed : nil
            }
            guard let shards else { return nil }
            guard shards >= 1 else { throw ValidationError("--shards \(shards): the work is split into 1 or more parts") }
            guard let text = ProcessInfo.processInfo.environment["JOB_COMPLETION_INDEX"], let index = Int(text) else {
                throw ValidationError("--shards \(shards) takes this process's index from JOB_COMPLETION_INDEX, which is not set to a number; pass --shard I/N instead")
            }
            guard let parsed = Shard(index: index, count: shards) else {
                throw ValidationError("--shards \(shards) with JOB_COMPLETION_INDEX=\(index): the index must be 0 to \(max(shards, 1) - 1)")
            }
            return parsed.count > 1 ? parsed : nil
        }
    }

    /// Whether an account is named on the command line (a connection string or az-style options).
    var namesAnAccount: Bool { accountOptions || connectionString != nil }

    /// Whether az-style account options are given instead of a connection string.
    private var accountOptions: Bool { accountName != nil || blobEndpointURL != nil || tableEndpointURL != nil || sasToken != nil }

    @Option(help: ArgumentHelp("Also trust the CA certificates in this PEM file for HTTPS (a private CA, an emulator's certificate); default: $SSL_CERT_FILE.", valueName: "file"))
    var caFile: String?

    @Option(help: ArgumentHelp("Seconds without a byte from the service before a request fails; a stalled request is not retried, and no retry starts later than three times this after a request's first try.", valueName: "seconds"))
    var timeout = 10

    @Option(help: ArgumentHelp("How long to wait for another azseed command that has the embedded storage's folder open (such as 30s or 5m; default 0s: refuse at once).", valueName: "duration"))
    var lockTimeout = "0s"

    @OptionGroup var logging: LoggingOptions

    /// `--lock-timeout` as a duration: whole seconds, or minutes with `m`.
    var lockWait: Duration {
        get throws {
            let text = lockTimeout.lowercased()
            let (digits, unit): (Substring, Int64) = text.hasSuffix("m") ? (text.dropLast(), 60) : text.hasSuffix("s") ? (text.dropLast(), 1) : (Substring(text), 1)
            guard let value = Int64(digits), value >= 0, value <= 86_400 / unit else {
                throw ValidationError("--lock-timeout '\(lockTimeout)': give a duration such as 0s, 30s or 5m (at most a day)")
            }
            return .seconds(value * unit)
        }
    }

    /// The clients' configuration: `--timeout`, and the request log of `--verbose` and `--log-file`.
    func clientConfiguration() async throws -> ClientConfiguration {
        var configuration = ClientConfiguration()
        configuration.timeout = timeout
        configuration.log = try await logging.makeLog()
        return configuration
    }

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout \(timeout): give 1 to 3600 seconds") }
        _ = try lockWait
        if let caFile { try Self.trust(caFile: caFile) }
        _ = try chosenShard
        if accountOptions {
            if connectionString != nil { throw ValidationError("--connection-string excludes --account-name, --blob-endpoint, --table-endpoint and --sas-token; give one or the other") }
            if dataDir != nil { throw ValidationError("--data-dir is for the embedded storage; drop it when naming an account") }
            do { _ = try Self.signed(optionsAccount(), login: effectiveAuthMode == .login) } catch let error as ValidationError { throw error } catch {
                throw ValidationError("\(error)")
            }
        }
        if let connectionString {
            do { _ = try Self.signed(ConnectionString.parse(connectionString), login: effectiveAuthMode == .login) } catch let error as ValidationError { throw error } catch {
                throw ValidationError("--connection-string: \(error)")
            }
            if dataDir != nil { throw ValidationError("--data-dir is for the embedded storage; drop it when passing --connection-string") }
        }
        if try effectiveAuthMode == .login {
            // Made here, while parsing on the main thread: it may read a certificate file and
            // look for `az` on PATH, which must not happen on the cooperative pool.
            _ = try Self.loginCredential()
            if sasToken != nil { throw ValidationError("--sas-token is for --auth-mode key; --auth-mode login signs in with Microsoft Entra ID instead") }
            guard accountOptions || connectionString != nil || ProcessInfo.processInfo.environment[ConnectionString.environmentVariable] != nil else {
                throw ValidationError("--auth-mode login needs the account: give --account-name, or --blob-endpoint and --table-endpoint")
            }
        }
    }

    /// `--ca-file`: its CA certificates are trusted beside the system's by every transport this
    /// run makes (`CurlTransport.environmentCertificates` reads `SSL_CERT_FILE`). Set while
    /// parsing, before any thread that could read the environment starts.
    static func trust(caFile: String) throws {
        let path = URL(fileURLWithPath: caFile).standardizedFileURL.path
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ValidationError("--ca-file \(caFile): cannot be read; pass a PEM file of CA certificates")
        }
        setenv("SSL_CERT_FILE", path, 1)
    }

    /// The embedded storage's folder: `--data-dir`, else `.azseed/storage`.
    var dataDirectory: URL { URL(fileURLWithPath: dataDir ?? EmbeddedStorage.defaultDataDirectory) }

    /// The account named by the flag or the environment; nil means the embedded storage.
    func explicitAccount() throws -> StorageAccount? {
        let login = try effectiveAuthMode == .login
        var account: StorageAccount
        if accountOptions {
            account = try Self.signed(optionsAccount(), login: login)
        } else if let connectionString {
            account = try Self.signed(ConnectionString.parse(connectionString), login: login)
        } else if let environment = try ConnectionString.fromEnvironment() {
            account = try Self.signed(environment, login: login)
        } else {
            return nil
        }
        if login { account.credential = .bearer(try Self.loginCredential()) }
        return account
    }

    /// The Entra ID credential of `--auth-mode login`: the first one the environment
    /// configures (DefaultAzureCredential's order), made once per run so its token is reused.
    private static func loginCredential() throws -> BearerTokenSource {
        try madeCredential.withLock { made in
            if let made { return made }
            let source = BearerTokenSource(credential: try DefaultAzureCredential())
            made = source
            return source
        }
    }

    private static let madeCredential = Mutex<BearerTokenSource?>(nil)

    private func optionsAccount() throws(AzureStorageError) -> StorageAccount {
        try ConnectionString.account(accountName: accountName, blobEndpoint: blobEndpointURL, tableEndpoint: tableEndpointURL, sasToken: sasToken)
    }

    /// Every command reads or writes tables, which take no anonymous request. With `login`
    /// the account must name no key or SAS (the token replaces them) and use HTTPS.
    private static func signed(_ account: StorageAccount, login: Bool = false) throws -> StorageAccount {
        guard login else {
            if case .anonymous = account.credential { throw ConnectionStringError.noCredential.storageError }
            return account
        }
        switch account.credential {
        case .sharedKey: throw ValidationError("--auth-mode login signs in with Microsoft Entra ID; the connection string's AccountKey would go unused — drop it, or use --auth-mode key")
        case .sas: throw ValidationError("--auth-mode login signs in with Microsoft Entra ID; the SAS would go unused — drop it, or use --auth-mode key")
        case .bearer, .anonymous: break
        }
        for url in [account.blobEndpoint, account.tableEndpoint] where url.scheme?.lowercased() != "https" {
            throw ValidationError("--auth-mode login needs https endpoints (a token is never sent over plain HTTP): \(url.absoluteString)")
        }
        return account
    }

    /// The location the flags name: the explicit account, else the embedded storage.
    func location() throws -> StorageLocation {
        if let account = try explicitAccount() { return .account(account) }
        return .embedded(dataDirectory: dataDirectory, provider: EmulatorEmbeddedStorage())
    }

    /// The endpoint generated blob URLs point into: the account's blob endpoint, or for the
    /// embedded storage the emulator's well-known one (where `azseed emulator` serves the
    /// same folder), not the free port of this run.
    func blobEndpoint() throws -> String {
        guard let account = try explicitAccount() else { return GenerationOptions.developmentBlobEndpoint }
        let url = account.blobEndpoint.absoluteString
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }
}

extension StorageSession {
    /// Opens the target the flags name for `body`, saying on stderr when it is the embedded
    /// storage and how it was reached.
    /// `configuration` when the command made one already (to share it with another account's clients).
    static func with<T>(_ options: TargetOptions, configuration: ClientConfiguration? = nil, _ body: (StorageSession) async throws -> T) async throws -> T {
        let shown = options.dataDir ?? EmbeddedStorage.defaultDataDirectory
        let command = (["azseed"] + CommandLine.arguments.dropFirst().prefix(1)).joined(separator: " ")
        let configuration = if let configuration { configuration } else { try await options.clientConfiguration() }
        return try await with(try options.location(), command: command, shard: try options.chosenShard, configuration: configuration,
                              lockTimeout: try options.lockWait, note: { Console.note("using the embedded storage in \(shown) \($0)") }) { session in
            if session.servesHere {
                Console.note("using the embedded storage in \(shown) (no --connection-string or \(ConnectionString.environmentVariable)); 'azseed emulator' serves it")
            }
            return try await body(session)
        }
    }
}
