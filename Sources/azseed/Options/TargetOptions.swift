import ArgumentParser
import AzureStorage
import EmbeddedEmulator
import Foundation
import SeedKit
import SeedRunner
import StorageEmulator

/// Where a storage command works: `--connection-string`, else the environment variable,
/// else the embedded storage (the emulator started in-process over `--data-dir`).
struct TargetOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The storage account's connection string (default: $AZURE_STORAGE_CONNECTION_STRING, else the embedded storage).", valueName: "string"))
    var connectionString: String?

    @Option(help: ArgumentHelp("The embedded storage's folder, used when no connection string is given.", valueName: "dir"))
    var dataDir: String?

    @Option(help: ArgumentHelp("The account, for its public-cloud endpoints (instead of a connection string; with --sas-token).", valueName: "name"))
    var accountName: String?

    @Option(
        name: .customLong("blob-endpoint"),
        help: ArgumentHelp("The Blob endpoint URL, optionally with a SAS as its query (instead of a connection string).", valueName: "url"))
    var blobEndpointURL: String?

    @Option(
        name: .customLong("table-endpoint"),
        help: ArgumentHelp("The Table endpoint URL, optionally with a SAS as its query (instead of a connection string).", valueName: "url"))
    var tableEndpointURL: String?

    @Option(help: ArgumentHelp("A shared access signature for both services (with --account-name or the endpoints).", valueName: "token"))
    var sasToken: String?

    @Option(
        help: ArgumentHelp(
            "How requests are authorised, as az names it: 'key' (the connection string's key or SAS; the default) or 'login' (a Microsoft Entra ID token from the environment's service principal, workload identity, managed identity or 'az login'); default: $AZURE_STORAGE_AUTH_MODE, else key.",
            valueName: "mode"))
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

    @Option(
        help: ArgumentHelp(
            "Do part I of N of the work (0 ≤ I < N): entities by a hash of their keys, blobs by name; N processes with I = 0…N-1 together do what one does.",
            valueName: "I/N"))
    var shard: String?

    @Option(help: ArgumentHelp("Split the work N ways, this process's part from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job).", valueName: "N"))
    var shards: Int?

    /// The part of the work this process does: `--shard I/N`, or `--shards N` with the index
    /// from `JOB_COMPLETION_INDEX`; nil does all of it.
    var chosenShard: Shard? {
        get throws {
            if let shard {
                guard shards == nil else {
                    throw ValidationError("--shard and --shards exclude each other; --shards takes the index from JOB_COMPLETION_INDEX")
                }
                guard let parsed = Shard(shard) else { throw ValidationError("--shard '\(shard)': give I/N with 0 ≤ I < N, such as 0/4") }
                return parsed.count > 1 ? parsed : nil
            }
            guard let shards else { return nil }
            guard shards >= 1 else { throw ValidationError("--shards \(shards): the work is split into 1 or more parts") }
            guard let text = ProcessInfo.processInfo.environment["JOB_COMPLETION_INDEX"], let index = Int(text) else {
                throw ValidationError(
                    "--shards \(shards) takes this process's index from JOB_COMPLETION_INDEX, which is not set to a number; pass --shard I/N instead")
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

    @Option(
        help: ArgumentHelp(
            "Also trust the CA certificates in this PEM file for HTTPS (a private CA, an emulator's certificate); default: $SSL_CERT_FILE.",
            valueName: "file"))
    var caFile: String?

    @Option(
        help: ArgumentHelp(
            "Seconds without a byte from the service before a request fails; a stalled request is not retried, and no retry starts later than three times this after a request's first try.",
            valueName: "seconds"))
    var timeout = 10

    @Option(
        help: ArgumentHelp(
            "How long to wait for another azseed command that has the embedded storage's folder open, or (migrate) holds the account's migrate lock (such as 30s or 5m; default 0s: refuse at once).",
            valueName: "duration"))
    var lockTimeout = "0s"

    @OptionGroup var logging: LoggingOptions

    /// `--lock-timeout` as a duration: whole seconds, or minutes with `m`.
    var lockWait: Duration {
        get throws {
            let text = lockTimeout.lowercased()
            let (digits, unit): (Substring, Int64) =
                text.hasSuffix("m") ? (text.dropLast(), 60) : text.hasSuffix("s") ? (text.dropLast(), 1) : (Substring(text), 1)
            guard let value = Int64(digits), value >= 0, value <= 86_400 / unit else {
                throw ValidationError("--lock-timeout '\(lockTimeout)': give a duration such as 0s, 30s or 5m (at most a day)")
            }
            return .seconds(value * unit)
        }
    }

    /// The clients' configuration: `--timeout`, `--ca-file`, and the request log of
    /// `--verbose` and `--log-file`.
    func clientConfiguration() async throws -> ClientConfiguration {
        var configuration = ClientConfiguration()
        configuration.timeout = timeout
        configuration.trustedCertificates = try Self.trustedCertificates(caFile: caFile)
        if let log = try await logging.makeLog() { configuration.logger = .requests(log, label: "azseed") }
        return configuration
    }

    /// The target, resolved once for the run: the account (its Entra credential made here,
    /// on the blocking threads: it may read files and look for `az`) or the embedded folder,
    /// the clients' configuration, the shard and the lock timeout. `configuration`: one the
    /// command made already (to share it with another account's clients).
    /// `readOnly`: the command writes nothing (a plan, a verify, a dry run), so an embedded
    /// data folder that does not exist is read as an empty account and not made.
    /// `connection`: the target's connection string when a command takes it by another flag.
    /// `environment`: false for a target of a `--targets` file, which names its account itself.
    func resolve(configuration: ClientConfiguration? = nil, readOnly: Bool = false, connection: Connection? = nil, environment: Bool = true)
        async throws -> RunTarget
    {
        let configuration = if let configuration { configuration } else { try await clientConfiguration() }
        let command = (["azseed"] + CommandLine.arguments.dropFirst().prefix(1)).joined(separator: " ")
        var location: RunTarget.Location = .embedded(dataDirectory: dataDirectory, provider: EmulatorEmbeddedStorage(readOnly: readOnly))
        if var account = try environment
            ? namedAccount(connection: connection ?? self.connection) : flagAccount(connection: connection ?? self.connection)
        {
            if try effectiveAuthMode == .login {
                let trusted = configuration.trustedCertificates
                account.credential = .bearer(try await BlockingPool.run { try Self.loginCredential(trustedCertificates: trusted) })
            }
            location = .account(account)
        }
        return RunTarget(location: location, configuration: configuration, shard: try chosenShard, lockTimeout: try lockWait, command: command)
    }

    /// A connection string and the flag that gave it (`--connection-string`; `copy --to`), so
    /// what is said about it names the flag the user typed.
    struct Connection {
        var string: String
        var flag: String
    }

    /// `--connection-string`, as given.
    var connection: Connection? { connectionString.map { Connection(string: $0, flag: "--connection-string") } }

    func validate() throws { try validate(connection: connection) }

    /// The checks of ``validate()`` with the target's connection string given by `connection`.
    func validate(connection: Connection?) throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout \(timeout): give 1 to 3600 seconds") }
        _ = try lockWait
        if let caFile { try Self.checkReadable(caFile: caFile) }
        _ = try chosenShard
        if accountOptions {
            if let connection {
                throw ValidationError(
                    "\(connection.flag) excludes --account-name, --blob-endpoint, --table-endpoint and --sas-token; give one or the other")
            }
            if dataDir != nil { throw ValidationError("--data-dir is for the embedded storage; drop it when naming an account") }
        }
        if let connection, dataDir != nil {
            throw ValidationError("--data-dir is for the embedded storage; drop it when passing \(connection.flag)")
        }
        // The account the flags name is made here, as resolve() makes it, so a bad one is a
        // usage error before anything runs.
        do { _ = try flagAccount(connection: connection) } catch let error as ValidationError { throw error } catch {
            throw ValidationError(accountOptions ? spelled(error) : "\(connection?.flag ?? "--connection-string"): \(spelled(error))")
        }
        if try effectiveAuthMode == .login {
            // Made and dropped here, while parsing on the main thread, to check the environment
            // configures one (it may read a certificate file and look for `az` on PATH, which
            // must not happen on the cooperative pool); resolve() makes the run's own.
            do { _ = try Self.loginCredential(trustedCertificates: nil) } catch let error as ValidationError { throw error } catch {
                throw ValidationError("--auth-mode login: \(spelled(error))")
            }
            if sasToken != nil {
                throw ValidationError("--sas-token is for --auth-mode key; --auth-mode login signs in with Microsoft Entra ID instead")
            }
            guard accountOptions || connection != nil || ProcessInfo.processInfo.environment[ConnectionString.environmentVariable] != nil else {
                throw ValidationError("--auth-mode login needs the account: give --account-name, or --blob-endpoint and --table-endpoint")
            }
        }
    }

    /// `--ca-file` must be readable; its certificates reach the transports through
    /// ``ClientConfiguration/trustedCertificates``.
    /// Only a regular file: a named pipe would hold the transport's thread while it is opened.
    static func checkReadable(caFile: String, flag: String = "--ca-file") throws {
        let path = URL(fileURLWithPath: caFile).standardizedFileURL.path
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, FileManager.default.isReadableFile(atPath: path) else {
            throw ValidationError("\(flag) \(caFile): not a readable regular file; pass a PEM file of CA certificates")
        }
    }

    /// `--ca-file`, else `SSL_CERT_FILE` (as OpenSSL and curl read it), checked as `--ca-file` is.
    static func trustedCertificates(caFile: String?) throws -> String? {
        if let caFile { return URL(fileURLWithPath: caFile).standardizedFileURL.path }
        guard let environment = CurlTransport.environmentCertificates else { return nil }
        try checkReadable(caFile: environment, flag: "SSL_CERT_FILE")
        return environment
    }

    /// The embedded storage's folder: `--data-dir`, else `.azseed/storage`.
    var dataDirectory: URL { URL(fileURLWithPath: dataDir ?? EmbeddedStorage.defaultDataDirectory) }

    /// The account named by the flags or the environment, without the Entra credential
    /// `resolve()` adds; nil means the embedded storage.
    func namedAccount(connection: Connection? = nil) throws -> StorageAccount? {
        if let account = try flagAccount(connection: connection ?? self.connection) { return account }
        if let environment = try ConnectionString.fromEnvironment() { return try Self.signed(environment, login: effectiveAuthMode == .login) }
        return nil
    }

    /// The account the flags name — az's account flags, or the connection string given by
    /// `connection` — signed as the run signs; nil when they name none. The one place either
    /// is read, by ``validate(connection:)`` and by ``resolve(configuration:readOnly:connection:)``.
    private func flagAccount(connection: Connection?) throws -> StorageAccount? {
        let login = try effectiveAuthMode == .login
        if accountOptions { return try Self.signed(optionsAccount(), login: login) }
        if let connection { return try Self.signed(ConnectionString.parse(connection.string), login: login) }
        return nil
    }

    /// The Entra ID credential of `--auth-mode login`: the first one the environment
    /// configures (DefaultAzureCredential's order); made once per run, so its token is reused.
    private static func loginCredential(trustedCertificates: String?) throws -> BearerTokenSource {
        let transport = CurlTransport(trustedCertificates: trustedCertificates ?? CurlTransport.environmentCertificates)
        return BearerTokenSource(credential: try DefaultAzureCredential(transport: transport))
    }

    private func optionsAccount() throws(AccountFlagsError) -> StorageAccount {
        try AccountFlags.account(accountName: accountName, blobEndpoint: blobEndpointURL, tableEndpoint: tableEndpointURL, sasToken: sasToken)
    }

    /// Every command reads or writes tables, which take no anonymous request. With `login`
    /// the account must name no key or SAS (the token replaces them) and use HTTPS.
    private static func signed(_ account: StorageAccount, login: Bool = false) throws -> StorageAccount {
        guard login else {
            if case .anonymous = account.credential { throw ConnectionStringError.noCredential.storageError }
            return account
        }
        switch account.credential {
        case .sharedKey:
            throw ValidationError(
                "--auth-mode login signs in with Microsoft Entra ID; the connection string's AccountKey would go unused — drop it, or use --auth-mode key"
            )
        case .sas:
            throw ValidationError("--auth-mode login signs in with Microsoft Entra ID; the SAS would go unused — drop it, or use --auth-mode key")
        case .bearer, .anonymous: break
        }
        for url in [account.blobEndpoint, account.tableEndpoint] where url.scheme?.lowercased() != "https" {
            throw ValidationError("--auth-mode login needs https endpoints (a token is never sent over plain HTTP): \(url.absoluteString)")
        }
        return account
    }

}
