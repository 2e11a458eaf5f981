import AzureStorage
import Foundation
import SeedKit

/// What carrying out a plan did.
public struct AppliedPlan: Sendable {
    public var plan: Plan
    public var report: ExecutionReport
    /// Requests, retries and throttled answers of the run.
    public var activity: RequestActivity
    /// Where embedded data lives and how to serve it; nil for an account.
    public var servingNote: Phrase?
    /// How a copy moved blob bytes when it could not copy server-side; nil otherwise.
    public var streamedBecause: String?
    /// The source origin a target emulator refused to read from (it reads remote sources only
    /// from allowed origins), when that is why blobs were streamed.
    public var refusedCopySource: String? = nil
}

/// Opens `target` for `body` and tells the observer how it was reached.
func withSession<T>(_ target: RunTarget, observer: any RunObserver, _ body: (StorageSession) async throws -> T) async throws -> T {
    var through: String?
    return try await StorageSession.with(target, note: { through = $0 }) { session in
        observer.opened(session, through: through)
        return try await body(session)
    }
}

/// Tells the observer the plan, then carries it out (not at all when `dryRun`).
func carryOut(
    _ plan: Plan, in session: StorageSession, concurrency: Int, dryRun: Bool, observer: any RunObserver,
    copier: BlobCopier? = nil
) async throws -> AppliedPlan {
    try await observer.planned(plan)
    var report = ExecutionReport()
    report.unchanged = plan.summary.unchanged
    if !dryRun, !plan.isEmpty {
        observer.event(.phaseBegan(.applying))
        report = try await session.run.execute(plan, concurrency: concurrency, copier: copier) { observer.applying($0) }
        observer.event(.phaseEnded(.applying))
    }
    return AppliedPlan(
        plan: plan, report: report, activity: session.run.configuration.activity, servingNote: session.servingNote,
        streamedBecause: copier?.fallbackReason, refusedCopySource: copier?.refusedOrigin)
}

/// A snapshot folder read and checked for an import into `target`: every file against the
/// manifest, and the embedded storage's folder not inside the snapshot (or around it). Reads
/// and hashes every file: on the blocking threads, not the pool.
public func readSnapshot(_ folder: URL, for target: RunTarget) async throws -> Snapshot {
    let embedded = target.embeddedDataDirectory
    return try await BlockingPool.run {
        if let embedded { try FolderOverlap.check(output: embedded, setting: .dataFolder, inputs: [("the snapshot", folder)]) }
        return try SnapshotReader.read(folder)
    }
}

/// `azseed import`: a snapshot (read with ``readSnapshot(_:for:)``) becomes the target's
/// desired state, planned and (unless `dryRun`) carried out.
public func importSnapshot(
    _ read: Snapshot, into target: RunTarget, prune: Bool, dryRun: Bool, concurrency: Int, digests: Bool,
    observer: any RunObserver = SilentObserver()
) async throws -> AppliedPlan {
    let folder = read.directory
    return try await withSession(target, observer: observer) { session in
        let header = PlanHeader(
            target: session.run.target, source: .snapshot, dataset: read.dataset ?? "snapshot", datasetDirectory: folder.standardizedFileURL.path,
            seed: read.seed, window: read.window, counts: [:], access: nil, prune: prune)
        let blobs = read.containers.map { "\($0.blobs.count) blobs in \($0.name)" }.joined(separator: ", ")
        let entities = read.tables.map { "\($0.entityCount) entities in \($0.name)" }.joined(separator: ", ")
        observer.note("snapshot \(folder.relativePath): \(blobs), \(entities)")
        let plan = try await session.run.plan(read.storage, header: header, digests: digests) { observer.reading($0) }
        return try await carryOut(plan, in: session, concurrency: concurrency, dryRun: dryRun, observer: observer)
    }
}

/// `azseed copy`: the named containers and tables of `source` (all but the system containers
/// when none are named) become the target's desired state, and the target reads the blobs from
/// the source itself where it can. Refuses a target that is the source.
public func copyAccount(
    from source: StorageAccount, containers: [String], tables: [String], to target: RunTarget, prune: Bool, dryRun: Bool,
    concurrency: Int, digests: Bool, observer: any RunObserver = SilentObserver()
) async throws -> AppliedPlan {
    try checkCopy(from: source, to: target)
    // The source's requests are logged and counted with the target's.
    let copySource = CopySource(account: source, configuration: target.configuration)
    let (containers, tables, skipped) = try await copySource.selection(containers: containers, tables: tables)
    for name in skipped {
        observer.note("source container \(name) skipped: system containers (the static website's $web, $root) are not copied")
    }
    observer.note(
        "source \(copySource.displayName): \(containers.count) container\(containers.count == 1 ? "" : "s"), \(tables.count) table\(tables.count == 1 ? "" : "s")"
    )
    return try await withSession(target, observer: observer) { session in
        let desired = try await copySource.desiredStorage(containers: containers, tables: tables, target: session.run)
        let header = PlanHeader(
            target: session.run.target, source: .account, dataset: copySource.displayName, datasetDirectory: source.blobEndpoint.absoluteString,
            seed: nil, window: nil, counts: [:], access: nil, prune: prune)
        let plan = try await session.run.plan(desired, header: header, digests: digests) { observer.reading($0) }
        let copier = BlobCopier(source: copySource.blobs, target: session.run.blobs.account)
        return try await carryOut(plan, in: session, concurrency: concurrency, dryRun: dryRun, observer: observer, copier: copier)
    }
}

/// Refuses a copy whose target is its source (``SameAccountError``).
public func checkCopy(from source: StorageAccount, to target: RunTarget) throws {
    if let account = target.account,
        sameService(account.blobEndpoint, source.blobEndpoint) || sameService(account.tableEndpoint, source.tableEndpoint)
    {
        throw SameAccountError(endpoint: source.blobEndpoint.absoluteString)
    }
}

/// A copy whose source and target are one account.
public struct SameAccountError: PersonFacingError, Sendable {
    public var endpoint: String
    public var phrase: Phrase { "the source and the target are the same account (\(endpoint)); copy between two accounts" }
}

/// Whether two endpoints are one service: scheme, host (DNS names without case; `localhost`
/// and `::1` as 127.0.0.1), port and path (without a trailing slash).
public func sameService(_ a: URL, _ b: URL) -> Bool {
    func key(_ url: URL) -> String {
        var host = (url.host ?? "").lowercased()
        if host == "localhost" || host == "::1" || host == "[::1]" { host = "127.0.0.1" }
        let scheme = (url.scheme ?? "").lowercased()
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        var path = url.path
        while path.hasSuffix("/") { path.removeLast() }
        return "\(scheme)://\(host):\(port)\(path)"
    }
    return Array(key(a).utf8) == Array(key(b).utf8)
}
