import Foundation
import Logging
import StorageProtocol

/// How an emulator runs: where it keeps data, where it listens, which faults it injects.
public struct EmulatorConfiguration: Sendable {
    /// The data directory; nil keeps everything in memory.
    public var dataDirectory: URL?
    /// The address to bind: loopback unless asked otherwise.
    public var host: String
    /// 0 picks a free port.
    public var blobPort: Int
    public var tablePort: Int
    /// The largest body of one Put Blob or Put Block.
    public var maxBlobBodyBytes: Int
    /// The largest blob a Put Block List may commit (`--max-committed-blob-mib`): a short list
    /// naming one staged block many times would otherwise write its size times over, on disk,
    /// in one request. 4 GiB by default.
    public var maxCommittedBlobBytes = 4 << 30
    /// The fraction of requests that fail (0 = none), and the seed that picks them.
    public var faultRate: Double
    public var faultSeed: UInt64
    /// The command that owns the data folder, written into its lock for a second opener to name.
    public var command: String = "azseed"
    /// The account served; the development account by default.
    public var accountName: String
    public var accountKey: AccountKey
    /// Serve both ports over TLS with this certificate chain and private key (PEM files);
    /// nil serves plain HTTP.
    public var tls: (certificateFile: String, keyFile: String)?
    /// Accept `Authorization: Bearer` tokens issued by this Microsoft Entra ID authority (or a
    /// stand-in publishing OpenID configuration and keys the same way); nil refuses them.
    public var oauthAuthority: URL?
    /// The one tenant whose tokens are accepted (required with ``oauthAuthority``).
    public var oauthTenant: String?
    /// A PEM file of CA certificates trusted besides the system's when reading the authority's
    /// keys and remote copy sources; nil trusts the system's alone (the CLI passes `--ca-file`,
    /// else `SSL_CERT_FILE`).
    public var trustedCertificates: String? = nil
    /// Where the emulator logs: each answered request at `info` (``ServedRecord`` metadata,
    /// which a ``RequestLogHandler`` writes as `--verbose` and `--log-file` lines), and the
    /// HTTP server's own messages. By default nowhere.
    public var logger: Logger = .silent
    /// How the messages the emulator answers with spell the settings they suggest (a start
    /// option such as an allowed copy source); `azseed emulator` spells them as its flags.
    public var settingNames: SettingNames = .library

    /// Origins copy sources outside this account may be read from; none by default.
    public var copySourceAllowances: [CopySourceAllowance] = []
    /// The longest a copy may spend reading a remote source, in seconds.
    public var copySourceTimeout = 300

    /// How long an archived blob takes to rehydrate at Standard priority, in seconds (High
    /// takes a tenth, at least a second). Azure takes up to 15 hours (High: under one).
    public var rehydrationSeconds = 600
    /// Blob versioning, an account setting on Azure (not part of the service properties):
    /// every write that replaces a blob, and Delete Blob, keep what they replace as a version.
    public var blobVersioning = false
    /// Container soft delete, an account setting on Azure (`containerDeleteRetentionPolicy`,
    /// through ARM): Delete Container keeps the container and its blobs this many days (1–365),
    /// listed with `include=deleted`, brought back by Restore Container. Nil: off.
    public var containerRetentionDays: Int?
    /// How often Storage Analytics writes the log entries and metrics it gathered
    /// (`--analytics-flush-seconds`); also when the server stops.
    public var analyticsFlushSeconds: Double = 10
    /// The account's encryption scopes (created through ARM on Azure): the names writes and
    /// containers may give in `x-ms-encryption-scope` / `x-ms-default-encryption-scope`.
    public var encryptionScopes: [String] = []

    /// Request bodies held in memory at once across every connection (blob uploads stream to
    /// disk and do not count); past it requests are answered 503 ServerBusy.
    public var maxBufferedBodyBytes = 128 << 20

    /// Table request bodies are at most 4 MiB, as on Azure.
    public static let maxTableBodyBytes = 4 * 1024 * 1024

    public init(
        dataDirectory: URL?, host: String = "127.0.0.1", blobPort: Int = 10000, tablePort: Int = 10002,
        maxBlobBodyBytes: Int = 256 * 1024 * 1024, faultRate: Double = 0, faultSeed: UInt64 = 0,
        accountName: String = ServedAccount.developmentAccountName,
        accountKey: AccountKey = AccountKey(base64: ServedAccount.developmentAccountKey)!
    ) {
        self.dataDirectory = dataDirectory
        self.host = host
        self.blobPort = blobPort
        self.tablePort = tablePort
        self.maxBlobBodyBytes = maxBlobBodyBytes
        self.faultRate = faultRate
        self.faultSeed = faultSeed
        self.accountName = accountName
        self.accountKey = accountKey
    }
}
