import AzureStorage
import Foundation
import SeedKit

/// What to seed: a dataset folder and the inputs that change what it generates — the flags
/// `plan`, `apply`, `verify` and `reset` share.
public struct DatasetRequest: Sendable {
    public var directory: URL
    /// The migrations folder whose applied migrations the desired state follows; nil: the
    /// dataset's own `migrations/`. The CLI gives the one `azseed migrate` uses, so both
    /// command families see one state.
    public var migrations: URL?
    /// Overrides the dataset's seed.
    public var seed: UInt64?
    /// Entity counts by kind, overriding the dataset's.
    public var counts: [String: Int]
    /// The reference time asked for (`--now`); nil takes the one the target's ledger recorded
    /// for the dataset, else the clock's.
    public var now: EdmDateTime?
    public var from: EdmDateTime?
    public var to: EdmDateTime?
    /// Overrides every container's access level.
    public var access: PublicAccess?
    /// This run's clock (tests inject one).
    public var clock: @Sendable () -> EdmDateTime

    public init(
        directory: URL, seed: UInt64? = nil, counts: [String: Int] = [:], now: EdmDateTime? = nil, from: EdmDateTime? = nil,
        to: EdmDateTime? = nil, access: PublicAccess? = nil,
        clock: @escaping @Sendable () -> EdmDateTime = { EdmDateTime(unixSeconds: Int64(Date().timeIntervalSince1970)) }
    ) {
        self.directory = directory
        self.seed = seed
        self.counts = counts
        self.now = now
        self.from = from
        self.to = to
        self.access = access
        self.clock = clock
    }

    /// ``migrations``, else the dataset's `migrations/`.
    public var migrationsFolder: URL { migrations ?? directory.appendingPathComponent("migrations") }

    /// The generation inputs at `--now` or the clock, pointing blob URLs at `blobEndpoint`.
    func options(blobEndpoint: String) -> GenerationOptions {
        GenerationOptions(seed: seed, counts: counts, now: now ?? clock(), from: from, to: to, access: access, blobEndpoint: blobEndpoint)
    }
}
