import AzureStorage
import Foundation
import SeedKit

/// Where and how a run works, resolved and checked once before anything is opened: the
/// account (with its credential) or the embedded folder, the clients' configuration
/// (timeouts, trusted CA certificates, request log), the shard, and how long to wait for an
/// embedded folder's owner. Every use case takes one.
public struct RunTarget: Sendable {
    /// Where storage work happens: an account, or the embedded storage — the emulator run in
    /// this process over a data folder (or reached through the `azseed emulator` that already
    /// serves that folder).
    public enum Location: Sendable {
        case account(StorageAccount)
        /// `provider` serves the folder (``EmbeddedStorageProvider``).
        case embedded(dataDirectory: URL, provider: any EmbeddedStorageProvider)
    }

    public var location: Location
    public var configuration: ClientConfiguration
    /// The part of the work this process does; nil does all of it.
    public var shard: Shard?
    /// How long to wait for another process that owns the embedded folder, or (migrate) for
    /// another run that holds the account's migrate lock.
    public var lockTimeout: Duration
    /// Names this process in an embedded folder's lock (`azseed apply`).
    public var command: String

    public init(
        location: Location, configuration: ClientConfiguration = ClientConfiguration(), shard: Shard? = nil,
        lockTimeout: Duration = .zero, command: String = "azseed"
    ) {
        self.location = location
        self.configuration = configuration
        self.shard = shard
        self.lockTimeout = lockTimeout
        self.command = command
    }

    /// The account named, or nil for the embedded storage.
    public var account: StorageAccount? {
        if case .account(let account) = location { return account }
        return nil
    }

    /// The embedded storage's folder, or nil for an account.
    public var embeddedDataDirectory: URL? {
        if case .embedded(let directory, _) = location { return directory }
        return nil
    }

    /// The endpoint generated blob URLs point into: the account's blob endpoint, or for the
    /// embedded storage the emulator's well-known one (where `azseed emulator` serves the
    /// same folder), not the free port of one run.
    public var generatedBlobEndpoint: String {
        guard let account else { return GenerationOptions.developmentBlobEndpoint }
        let url = account.blobEndpoint.absoluteString
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    /// Why deleting here needs an explicit confirmation, or nil when it does not: an
    /// account away from loopback. (The embedded storage is always loopback.)
    public var deletesNeedConfirmation: String? {
        guard let account, !account.isLoopback else { return nil }
        return "\(account.name) at \(account.blobEndpoint.host ?? "?"), which is not a loopback address"
    }
}

extension StorageSession {
    /// Opens `target`, runs `body`, then closes it whether or not `body` threw. `note` hears
    /// how an embedded folder was reached.
    public static func with<T>(_ target: RunTarget, note: (String) -> Void = { _ in }, _ body: (StorageSession) async throws -> T) async throws -> T {
        try await with(
            target.location, command: target.command, shard: target.shard, configuration: target.configuration, lockTimeout: target.lockTimeout,
            note: note, body)
    }
}

extension PlanTarget {
    /// The target as a plan, a result and a snapshot's manifest record it: the account's name
    /// and endpoints (never its credential), and the embedded folder when it is one.
    init(_ account: StorageAccount, embeddedDataDirectory: URL? = nil) {
        self.init(
            account: account.name, blobEndpoint: account.blobEndpoint.absoluteString, tableEndpoint: account.tableEndpoint.absoluteString,
            embeddedDataDirectory: embeddedDataDirectory?.standardizedFileURL.path)
    }
}
