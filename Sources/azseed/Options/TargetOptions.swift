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

    func validate() throws {
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
    private static func signed(_ account: StorageAccount) throws(ConnectionStringError) -> StorageAccount {
        if case .anonymous = account.credential { throw .noCredential }
        return account
    }

    /// Connects: to the explicit account, or starts the embedded storage and says so.
    func open() async throws -> StorageSession {
        if let account = try explicitAccount() {
            let target = PlanTarget(account: account.name, blobEndpoint: account.blobEndpoint.absoluteString,
                                    tableEndpoint: account.tableEndpoint.absoluteString)
            return StorageSession(run: SeedRun(account: account, target: target), server: nil)
        }
        let directory = dataDirectory
        let shown = dataDir ?? EmbeddedStorage.defaultDataDirectory
        let command = (["azseed"] + CommandLine.arguments.dropFirst().prefix(1)).joined(separator: " ")
        let connection = try await EmbeddedStorage.open(dataDirectory: directory, command: command)
        let canonical = StorageAccount.development()
        let target = PlanTarget(account: canonical.name, blobEndpoint: canonical.blobEndpoint.absoluteString,
                                tableEndpoint: canonical.tableEndpoint.absoluteString, embeddedDataDirectory: directory.standardizedFileURL.path)
        switch connection {
        case .started(let server):
            Console.note("using the embedded storage in \(shown) (no --connection-string or \(ConnectionString.environmentVariable)); 'azseed emulator' serves it")
            return StorageSession(run: SeedRun(account: server.account, target: target), server: server)
        case .served(let owner, let account):
            Console.note("using the embedded storage in \(shown) through the 'azseed emulator' that serves it (pid \(owner.pid), \(account.blobEndpoint.absoluteString))")
            return StorageSession(run: SeedRun(account: account, target: target), server: nil, servedBy: owner)
        }
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

/// An open target: the run, and the embedded server to stop afterwards (or the
/// `azseed emulator` that serves the embedded folder).
struct StorageSession {
    let run: SeedRun
    let server: EmulatorServer?
    var servedBy: DataFolderOwner? = nil

    func close() async { await server?.stop() }

    /// Runs `body`, then closes the session whether or not it threw.
    static func with<T>(_ options: TargetOptions, _ body: (StorageSession) async throws -> T) async throws -> T {
        let session = try await options.open()
        do {
            let result = try await body(session)
            await session.close()
            return result
        } catch {
            await session.close()
            throw error
        }
    }
}
