import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import StorageEmulator

/// `azseed emulator`: serve the embedded storage (Blob and Table, the development account).
struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Serve Azure-compatible Blob and Table storage from a local folder.",
        discussion: """
            The account is devstoreaccount1 with the well-known development key, addressed path style \
            as with Azurite (on the default ports, clients connect with 'UseDevelopmentStorage=true') \
            or with the account in the host name (devstoreaccount1.blob.localhost:10000). \
            Data lives in --data-dir (default .azseed/storage, the folder every azseed storage \
            command uses when given no connection string). Stop with Ctrl-C.
            """
    )

    @Option(help: ArgumentHelp("The address to listen on.", valueName: "address"))
    var host = "127.0.0.1"

    @Option(help: ArgumentHelp("The Blob service port (0 picks a free one).", valueName: "port"))
    var blobPort = 10000

    @Option(help: ArgumentHelp("The Table service port (0 picks a free one).", valueName: "port"))
    var tablePort = 10002

    @Option(help: ArgumentHelp("The folder holding the data.", valueName: "dir"))
    var dataDir: String?

    @Flag(help: "Keep everything in memory; nothing is written to disk.")
    var inMemory = false

    @Flag(
        help:
            "Give back the free space of --data-dir's database (a full VACUUM, upgrading the folder first) and exit; the folder must not be in use. A running emulator gives space back by itself while idle."
    )
    var compact = false

    @Option(help: ArgumentHelp("The largest Put Blob or Put Block body, in MiB.", valueName: "MiB"))
    var maxBlobMib = 256

    @Option(help: ArgumentHelp("The largest blob a Put Block List may commit, in MiB.", valueName: "MiB"))
    var maxCommittedBlobMib = 4096

    @Option(
        help: ArgumentHelp(
            "Fail this fraction of requests as Azure can (503 ServerBusy, 500 OperationTimedOut after applying, dropped connections).", valueName: "P"
        ))
    var faultRate = 0.0

    @Option(help: ArgumentHelp("The seed choosing which requests fail.", valueName: "S"))
    var faultSeed: UInt64 = 1

    @Option(help: ArgumentHelp("Serve HTTPS with this certificate (PEM, its chain after it); needs --key.", valueName: "file"))
    var cert: String?

    @Option(help: ArgumentHelp("The certificate's private key (PEM).", valueName: "file"))
    var key: String?

    @Option(
        help: ArgumentHelp(
            "Accept Microsoft Entra ID bearer tokens from this authority (https://login.microsoftonline.com, or a stand-in): their signatures are checked against the keys it publishes. Tokens are only accepted over HTTPS (--cert/--key).",
            valueName: "url"))
    var oauthAuthority: String?

    @Option(
        help: ArgumentHelp(
            "The tenant (id or domain) whose tokens are accepted; with --oauth-authority. Tokens of other tenants are refused: the emulator has no role assignments.",
            valueName: "tenant"))
    var oauthTenant: String?

    @Option(
        help: ArgumentHelp(
            "Also trust the CA certificates in this PEM file when reading the authority's keys; default: $SSL_CERT_FILE.", valueName: "file"))
    var caFile: String?

    @Option(
        help: ArgumentHelp(
            "Let copies read sources outside this account from this origin (scheme://host[:port], or scheme://*.domain[:port] for public addresses under a domain); repeatable. By default no remote source is read: a client could otherwise make the emulator fetch any URL it can reach.",
            valueName: "origin"))
    var allowCopySource: [String] = []

    @Option(help: ArgumentHelp("The longest one copy may spend reading a remote source.", valueName: "seconds"))
    var copySourceTimeout = 300

    @Option(
        help: ArgumentHelp(
            "How long an archived blob takes to rehydrate at Standard priority, 0 to 86400 (0: at once; High takes a tenth, at least a second). Azure takes up to 15 hours.",
            valueName: "seconds"))
    var rehydrateSeconds = 600

    @Flag(
        help:
            "Blob versioning, as the account setting on Azure: every write that replaces a blob (and Delete Blob) keeps what it replaced as a previous version (?versionid=)."
    )
    var blobVersioning = false

    @Option(
        help: ArgumentHelp(
            "Container soft delete, as the account setting on Azure: Delete Container keeps a container and its blobs this many days (1-365), listed with include=deleted and brought back by Restore Container.",
            valueName: "days"))
    var containerSoftDelete: Int?

    @Option(
        help: ArgumentHelp(
            "How often Storage Analytics (logging and metrics, switched on in Set Service Properties) writes what it gathered into $logs and the $Metrics tables; also when the emulator stops.",
            valueName: "seconds"))
    var analyticsFlushSeconds: Double = 10

    @Option(
        help: ArgumentHelp(
            "An encryption scope of the account (created through ARM on Azure), which writes and containers may name; repeatable.",
            valueName: "name"))
    var encryptionScope: [String] = []

    @OptionGroup var logging: LoggingOptions

    @Option(
        help:
            "How to say where it serves: text (lines for people), or json (one line: account, blobEndpoint, tableEndpoint, pid, dataDirectory — for scripts and test fixtures with --blob-port 0 --table-port 0)."
    )
    var output: PlanOutputOptions.Format = .text

    @Option(
        help: ArgumentHelp(
            "Once serving, write the JSON line of --output json to this file (whole, by a rename), and remove it on exit: a fixture waits for the file.",
            valueName: "file"))
    var readyFile: String?

    func validate() throws {
        if (cert == nil) != (key == nil) { throw ValidationError("--cert and --key go together: HTTPS needs the certificate and its private key") }
        for (flag, port) in [("--blob-port", blobPort), ("--table-port", tablePort)] where !(0...65535).contains(port) {
            throw ValidationError("\(flag) \(port): ports are 0 to 65535 (0 picks a free port)")
        }
        guard blobPort != tablePort || blobPort == 0 else { throw ValidationError("--blob-port and --table-port must differ") }
        guard (0...1).contains(faultRate) else { throw ValidationError("--fault-rate is a probability from 0 to 1, not \(faultRate)") }
        guard maxBlobMib >= 1 else { throw ValidationError("--max-blob-mib must be at least 1") }
        // Azure's largest block blob: 50,000 blocks of 4,000 MiB (about 190.7 TiB).
        guard (1...200_000_000).contains(maxCommittedBlobMib) else {
            throw ValidationError("--max-committed-blob-mib is 1 to 200000000 (Azure's largest block blob, 50,000 blocks of 4000 MiB)")
        }
        guard analyticsFlushSeconds >= 0.1 && analyticsFlushSeconds <= 3600 else {
            throw ValidationError("--analytics-flush-seconds \(analyticsFlushSeconds): from 0.1 to 3600")
        }
        if let days = containerSoftDelete, !(1...365).contains(days) {
            throw ValidationError("--container-soft-delete \(days): a container is kept 1 to 365 days, as on Azure")
        }
        guard (0...86_400).contains(rehydrateSeconds) else {
            throw ValidationError("--rehydrate-seconds \(rehydrateSeconds): from 0 to 86400 (a day)")
        }
        if inMemory && dataDir != nil { throw ValidationError("--in-memory and --data-dir exclude each other") }
        if compact && inMemory { throw ValidationError("--compact works on a --data-dir folder; there is nothing to compact in memory") }
        if let oauthAuthority {
            guard let url = URL(string: oauthAuthority), url.scheme?.lowercased() == "https", url.host != nil, url.query == nil else {
                throw ValidationError(
                    "--oauth-authority \(SecretRedaction.redact(oauthAuthority)): give the authority's https URL, such as https://login.microsoftonline.com"
                )
            }
            guard let oauthTenant else {
                throw ValidationError(
                    "--oauth-authority needs --oauth-tenant: Entra signs every tenant's tokens with the same keys, so the emulator accepts one tenant's"
                )
            }
            guard !oauthTenant.isEmpty, oauthTenant != ".", oauthTenant != "..",
                oauthTenant.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") })
            else {
                throw ValidationError("--oauth-tenant '\(oauthTenant)': a tenant id (GUID) or domain")
            }
        } else if oauthTenant != nil {
            throw ValidationError("--oauth-tenant goes with --oauth-authority")
        }
        for origin in allowCopySource where CopySourceAllowance(origin) == nil {
            throw ValidationError(
                "--allow-copy-source \(SecretRedaction.redact(origin)): give an origin such as http://127.0.0.1:10000 or https://*.blob.core.windows.net (scheme, host, optional port; no path, query or user)"
            )
        }
        if let readyFile {
            var isDirectory: ObjCBool = false
            if readyFile.isEmpty || (FileManager.default.fileExists(atPath: readyFile, isDirectory: &isDirectory) && isDirectory.boolValue) {
                throw ValidationError("--ready-file '\(readyFile)': give a file path (the file is written once serving, removed on exit)")
            }
            if compact { throw ValidationError("--ready-file goes with serving, not --compact") }
        }
        guard copySourceTimeout >= 1 else { throw ValidationError("--copy-source-timeout must be at least 1 second") }
        if let caFile { try TargetOptions.checkReadable(caFile: caFile) }
    }

    func run() async throws {
        let directory = inMemory ? nil : URL(fileURLWithPath: dataDir ?? EmbeddedStorage.defaultDataDirectory)
        if compact, let directory {
            // The look at the folder and VACUUM (which blocks for as long as it rewrites the
            // file) run on the blocking threads.
            let report = try await BlockingPool.run {
                guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("storage.sqlite").path) else {
                    throw ValidationError("--compact: \(directory.path) holds no azseed storage (no storage.sqlite)")
                }
                return try EmulatorFolder.compact(dataDirectory: directory, command: "azseed emulator --compact")
            }
            let mb = { (n: Int) in String(format: "%.1f MB", Double(n) / 1e6) }
            Console.print(
                "Compacted \(directory.path)/storage.sqlite: \(mb(report.bytesBefore)) -> \(mb(report.bytesAfter)) in \(String(format: "%.2f", report.seconds)) s.\n"
            )
            return
        }
        var configuration = EmulatorConfiguration(
            dataDirectory: directory, host: host, blobPort: blobPort, tablePort: tablePort,
            maxBlobBodyBytes: maxBlobMib << 20, faultRate: faultRate, faultSeed: faultSeed)
        // Named in the folder's lock: storage commands run on the same folder talk to it.
        configuration.command = "azseed emulator"
        configuration.maxCommittedBlobBytes = maxCommittedBlobMib << 20
        configuration.settingNames = .flags
        configuration.copySourceAllowances = allowCopySource.compactMap(CopySourceAllowance.init)
        configuration.copySourceTimeout = copySourceTimeout
        configuration.rehydrationSeconds = rehydrateSeconds
        configuration.blobVersioning = blobVersioning
        configuration.containerRetentionDays = containerSoftDelete
        configuration.analyticsFlushSeconds = analyticsFlushSeconds
        configuration.encryptionScopes = encryptionScope
        if let cert, let key { configuration.tls = (cert, key) }
        // Trusted by the transport that fetches the authority's keys.
        configuration.trustedCertificates = try TargetOptions.trustedCertificates(caFile: caFile)
        if let log = try await logging.makeLog() { configuration.logger = .requests(log, label: "azseed.emulator") }
        if let oauthAuthority {
            var text = oauthAuthority
            while text.hasSuffix("/") { text.removeLast() }
            configuration.oauthAuthority = URL(string: text)
            configuration.oauthTenant = oauthTenant
        }
        // A ready file left by an emulator that died says nothing true: gone before the ports
        // are bound, so a fixture never reads stale endpoints (validate() ruled out folders).
        if let readyFile { unlink(readyFile) }
        let server = try await EmulatorServer.start(configuration, shutdownOnSignals: true)
        let account = server.account
        var lines = [
            "azseed emulator: serving \(account.name) from \(directory?.path ?? "memory")",
            "  blob:  \(account.blobEndpoint.absoluteString)",
            "  table: \(account.tableEndpoint.absoluteString)",
        ]
        if !configuration.copySourceAllowances.isEmpty {
            lines.append("  copy sources: this account, and \(configuration.copySourceAllowances.map(\.description).joined(separator: ", "))")
        }
        if faultRate > 0 { lines.append("  faults: \(faultRate) of requests (seed \(faultSeed))") }
        if let authority = configuration.oauthAuthority {
            lines.append(
                "  bearer tokens: from \(authority.absoluteString), tenant \(oauthTenant ?? "")\(cert == nil ? " (refused on this plain-HTTP emulator: add --cert and --key)" : "")"
            )
        }
        if blobPort == 10000 && tablePort == 10002 && (host == "127.0.0.1" || host == "localhost") && cert == nil {
            lines.append("  connect with: UseDevelopmentStorage=true")
        } else {
            // The key is never printed: other clients take the development key in its place;
            // azseed reads the development account on any endpoints from the second form.
            lines.append(
                "  connect with: DefaultEndpointsProtocol=\(cert == nil ? "http" : "https");AccountName=\(account.name);AccountKey=\(ConnectionString.developmentKeyPlaceholder);BlobEndpoint=\(account.blobEndpoint.absoluteString);TableEndpoint=\(account.tableEndpoint.absoluteString)"
            )
            lines.append(
                "  azseed connects with: UseDevelopmentStorage=true;BlobEndpoint=\(account.blobEndpoint.absoluteString);TableEndpoint=\(account.tableEndpoint.absoluteString)"
            )
        }
        let endpoints =
            JSONValue.object([
                ("account", .string(account.name)), ("blobEndpoint", .string(account.blobEndpoint.absoluteString)),
                ("tableEndpoint", .string(account.tableEndpoint.absoluteString)), ("pid", .int(Int64(getpid()))),
                ("dataDirectory", directory.map { .string($0.standardizedFileURL.path) } ?? .null),
            ]).compact() + "\n"
        if let readyFile {
            let file = URL(fileURLWithPath: readyFile)
            do {
                try await BlockingPool.run { try AtomicFile.write(file) { try $0(Array(endpoints.utf8)) } }
            } catch {
                await server.stop()
                throw RunError("--ready-file \(readyFile): cannot write it (\(FileProblem.describe(error))); check the folder exists and is writable")
            }
        }
        // Written in one go and unbuffered, so a script reading the ports sees them at once. A
        // closed or broken stdout does not stop the server (the ready file still says it all).
        try? FileHandle.standardOutput.write(contentsOf: Data((output == .json ? endpoints : lines.joined(separator: "\n") + "\n").utf8))
        defer {
            // Only this emulator's file: another one given the same path may have replaced it.
            if let readyFile, FileManager.default.contents(atPath: readyFile) == Data(endpoints.utf8) { unlink(readyFile) }
        }
        try await server.wait()
    }
}
