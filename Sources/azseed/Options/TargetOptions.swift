import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import StorageEmulator

/// Where a storage command works: `--connection-string`, else the environment variable,
/// else the embedded storage (the emulator started in-process over `--data-dir`).
struct TargetOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The storage account's connection string (default: $AZURE_STORAGE_CONNECTION_STRING, else the embedded storage).", valueName: "string"))
    var connectionString: String?

    @Option(help: ArgumentHelp("The embedded storage's folder, used when no connection string is given.", valueName: "dir"))
    var dataDir: String?

    @Option(help: ArgumentHelp("Also trust the CA certificates in this PEM file for HTTPS (a private CA, an emulator's certificate); default: $SSL_CERT_FILE.", valueName: "file"))
    var caFile: String?

    func validate() throws {
        if let caFile {
            let path = URL(fileURLWithPath: caFile).standardizedFileURL.path
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw ValidationError("--ca-file \(caFile): cannot be read; pass a PEM file of CA certificates")
            }
            // Read by every transport this run makes (CurlTransport.environmentCertificates).
            // Set while parsing, before any thread that could read the environment starts.
            setenv("SSL_CERT_FILE", path, 1)
        }
        if let connectionString {
            do { _ = try Self.signed(ConnectionString.parse(connectionString)) } catch { throw ValidationError("--connection-string: \(error)") }
            if dataDir != nil { throw ValidationError("--data-dir is for the embedded storage; drop it when passing --connection-string") }
        }
    }

    /// The embedded storage's folder: `--data-dir`, else `.azseed/storage`.
    var dataDirectory: URL { URL(fileURLWithPath: dataDir ?? EmbeddedStorage.defaultDataDirectory) }

    /// The account named by the flag or the environment; nil means the embedded storage.
    func explicitAccount() throws -> StorageAccount? {
        if let connectionString { return try Self.signed(ConnectionString.parse(connectionString)) }
        return try ConnectionString.fromEnvironment().map(Self.signed)
    }

    /// Every command reads or writes tables, which take no anonymous request.
    private static func signed(_ account: StorageAccount) throws(AzureStorageError) -> StorageAccount {
        if case .anonymous = account.credential { throw ConnectionStringError.noCredential.storageError }
        return account
    }

    /// The location the flags name: the explicit account, else the embedded storage.
    func location() throws -> StorageLocation {
        if let account = try explicitAccount() { return .account(account) }
        return .embedded(dataDirectory: dataDirectory)
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
    static func with<T>(_ options: TargetOptions, _ body: (StorageSession) async throws -> T) async throws -> T {
        let shown = options.dataDir ?? EmbeddedStorage.defaultDataDirectory
        let command = (["azseed"] + CommandLine.arguments.dropFirst().prefix(1)).joined(separator: " ")
        return try await with(try options.location(), command: command, note: { Console.note("using the embedded storage in \(shown) \($0)") }) { session in
            if session.server != nil {
                Console.note("using the embedded storage in \(shown) (no --connection-string or \(ConnectionString.environmentVariable)); 'azseed emulator' serves it")
            }
            return try await body(session)
        }
    }
}
