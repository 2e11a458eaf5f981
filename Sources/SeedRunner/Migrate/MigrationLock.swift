import AzureStorage
import Foundation
import SeedKit
import Synchronization

/// One `migrate apply` (or `undo`, `repair`, `baseline`) per account at a time: a lease on blob
/// `migrate.lock` in azseed's container (``ReservedNames/ledgerContainer``), taken for 60 s,
/// renewed every 20 s while the run lasts — and before each write that is not idempotent
/// (``prove()``) — and released at its end. A run that no longer holds it stops before its
/// next write. The blob holds who took it, so a refusal can say.
///
/// The shards of a sharded apply (`--shard I/N`) each take a lock of their own
/// (`migrate.shard-I-of-N.lock`), so they run at once; a shard and an unsharded run exclude
/// each other: each, holding its own lock, looks at the other kind's and lets go when one is
/// held (two that start together may both let go; neither runs beside the other).
final class MigrationLock: Sendable {
    static let blob = "migrate.lock"
    static let shardPrefix = "migrate.shard-"
    static let seconds = 60
    static let renewEvery: Duration = .seconds(20)

    /// The lock blob of `shard` (nil: the account's).
    static func blob(_ shard: Shard?) -> String {
        guard let shard, shard.count > 1 else { return blob }
        return "\(shardPrefix)\(shard.index)-of-\(shard.count).lock"
    }

    let blobs: BlobClient
    let id: String
    let name: String
    private let lost = Mutex<String?>(nil)
    private let renewal = Mutex<Task<Void, Never>?>(nil)

    private init(blobs: BlobClient, id: String, name: String) {
        self.blobs = blobs
        self.id = id
        self.name = name
    }

    /// Takes the lock (of `shard`, or the account's), waiting up to `timeout` for another run to end.
    static func acquire(
        _ blobs: BlobClient, holder: String, timeout: Duration, observer: any RunObserver, shard: Shard? = nil
    ) async throws -> MigrationLock {
        let lock = try await acquireOne(blobs, name: blob(shard), holder: holder, timeout: timeout, observer: observer)
        do {
            if let other = try await otherKindHeld(blobs, shard: shard) {
                throw RunError(
                    shard == nil
                        ? "a sharded migrate apply holds its lock (\(Printable.escaped(other, quotes: false))); wait for every shard to finish, or, if they are gone, \(Setting.migrateBreakLock)"
                        : other == blob
                            ? "an unsharded migrate run holds the account's migrate lock; wait for it to finish, or, if it is gone, \(Setting.migrateBreakLock)"
                            : "a shard of another split holds its lock (\(Printable.escaped(other, quotes: false))); every shard of one apply takes the same N — wait for them to finish, or, if they are gone, \(Setting.migrateBreakLock)"
                )
            }
        } catch let error as AzureStorageError {
            await lock.release()
            throw RunError.explaining(error, while: "looking at azseed's migrate locks")
        } catch {
            // Any other way out (the run cancelled while it listed the locks, a RunError above)
            // gives the lock back too: else it stayed held until its lease ran out.
            await lock.release()
            throw error
        }
        return lock
    }

    /// A held lock that excludes this run: a shard's for an unsharded run; for a shard, the
    /// account's or that of a shard of another split (another N would apply parts twice).
    private static func otherKindHeld(_ blobs: BlobClient, shard: Shard?) async throws -> String? {
        let ours = shard.map { "-of-\($0.count).lock" }
        for try await page in blobs.list(container: ReservedNames.ledgerContainer, prefix: "migrate.") {
            for listed in page where listed.leaseState == "leased" {
                if let ours {
                    if listed.name == blob || (listed.name.hasPrefix(shardPrefix) && !listed.name.hasSuffix(ours)) { return listed.name }
                } else if listed.name.hasPrefix(shardPrefix) {
                    return listed.name
                }
            }
        }
        return nil
    }

    private static func acquireOne(
        _ blobs: BlobClient, name blob: String, holder: String, timeout: Duration, observer: any RunObserver
    ) async throws -> MigrationLock {
        let container = ReservedNames.ledgerContainer
        do {
            _ = try await blobs.ensureContainer(container)
            do {
                try await blobs.putBlob(Data(), container: container, name: blob, options: BlobUploadOptions(onlyIfAbsent: true))
            } catch let error as AzureStorageError where error.status == 409 || error.status == 412 {
                // There already, possibly leased.
            }
        } catch {
            throw RunError.explaining(error, while: "making azseed's migrate lock (container \(container))")
        }
        let deadline = ContinuousClock.now + timeout
        var said = false
        while true {
            // The id is chosen here, so a run stopped while the answer is on its way still
            // knows the lease it may hold, and releases it.
            let lock = MigrationLock(blobs: blobs, id: UUID().uuidString.lowercased(), name: blob)
            do {
                do {
                    _ = try await blobs.acquireLease(container: container, name: blob, seconds: seconds, proposedID: lock.id)
                    var options = BlobUploadOptions(contentType: "text/plain")
                    options.leaseID = lock.id
                    try await blobs.putBlob(Data(holder.utf8), container: container, name: blob, options: options)
                } catch let error as AzureStorageError where error.status == 409 {
                    throw error
                } catch {
                    await lock.release()
                    throw error
                }
                lock.startRenewing()
                return lock
            } catch let error as AzureStorageError where error.status == 409 {
                if ContinuousClock.now >= deadline {
                    let by =
                        (try? await blobs.download(container: container, name: blob)).map { String(decoding: $0.prefix(512), as: UTF8.self) } ?? ""
                    let who = by.isEmpty ? "" : " (\(Printable.escaped(by, quotes: false)))"
                    throw RunError(
                        "another migrate run holds the account's migrate lock\(who); wait for it to finish, wait longer with \(Setting.lockTimeout), or, if that run is gone, \(Setting.migrateBreakLock)"
                    )
                }
                if !said {
                    observer.note("waiting for another migrate run to release the account's migrate lock")
                    said = true
                }
                try await Task.sleep(for: .seconds(1))
            } catch {
                throw RunError.explaining(error, while: "taking azseed's migrate lock")
            }
        }
    }

    /// What the lock blob says of its holder.
    static func holder(tool: String, host: String, pid: Int32, since: EdmDateTime) -> String {
        "\(tool) on \(host), pid \(pid), since \(since.shortISO8601)"
    }

    /// Ends whoever holds the account's lock and every shard's lock, at once (`repair
    /// --break-lock`) — refused when a holder is a process of this machine that is still running
    /// (it would go on writing beside the next run). True when a lock was broken.
    static func breakLock(_ blobs: BlobClient, host: String) async throws -> Bool {
        var names = [blob]
        do {
            for try await page in blobs.list(container: ReservedNames.ledgerContainer, prefix: shardPrefix) {
                names += page.filter { $0.leaseState == "leased" }.map(\.name)
            }
        } catch let error as AzureStorageError where error.status == 404 {
            return false
        } catch {
            throw RunError.explaining(error, while: "listing azseed's migrate locks")
        }
        for name in names {
            if let data = try? await blobs.download(container: ReservedNames.ledgerContainer, name: name),
                let text = String(data: data.prefix(512), encoding: .utf8),
                let match = text.firstMatch(of: #/^.* on (.+), pid (\d+), since /#), String(match.1) == host,
                let pid = Int32(match.2), pid != getpid(), kill(pid, 0) == 0 || errno == EPERM
            {
                throw RunError(
                    "the migrate lock \(name) is held by process \(pid) of this machine, which is still running (\(Printable.escaped(text, quotes: false))); stop it (Ctrl-C releases the lock), then run again"
                )
            }
        }
        var broke = false
        for name in names {
            do {
                try await blobs.breakLease(container: ReservedNames.ledgerContainer, name: name, period: 0)
                broke = true
            } catch let error as AzureStorageError where error.status == 404 || error.code == .leaseNotPresentWithLeaseOperation {
            } catch {
                throw RunError.explaining(error, while: "breaking azseed's migrate lock")
            }
        }
        return broke
    }

    private func startRenewing() {
        let blobs = self.blobs
        let id = self.id
        let name = self.name
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.renewEvery)
                if Task.isCancelled { return }
                do {
                    try await blobs.renewLease(container: ReservedNames.ledgerContainer, name: name, id: id)
                } catch let error as AzureStorageError {
                    self?.lost.withLock { $0 = "renewing its lease: \(error.code.map { "\($0)" } ?? "HTTP \(error.status ?? 0)")" }
                    return
                } catch {
                    self?.lost.withLock { $0 = "its lease could not be renewed" }
                    return
                }
            }
        }
        renewal.withLock { $0 = task }
    }

    /// Throws when the lock could not be renewed: the run must stop before its next write.
    func check() throws {
        if let why = lost.withLock({ $0 }) { throw Self.takenOver(why) }
    }

    /// Renews the lease now and throws when it is no longer this run's (broken, or taken by
    /// another run): called before each write that is not idempotent, so a lock broken a moment
    /// ago stops the run before that write, not at the next renewal 20 s later. (The ledger's
    /// fence, ``Ledger/write(_:fence:)``, covers the moment between this and the write.)
    func prove() async throws {
        try check()
        do {
            try await blobs.renewLease(container: ReservedNames.ledgerContainer, name: name, id: id)
        } catch let error as AzureStorageError where error.status == 409 || error.status == 412 || error.status == 404 {
            let why = error.status == 404 ? "its blob was deleted" : "its lease was broken or taken by another run"
            lost.withLock { $0 = why }
            throw Self.takenOver(why)
        } catch {
            throw RunError.explaining(error, while: "renewing azseed's migrate lock")
        }
    }

    /// The one line of a run that no longer holds the lock: it stopped before its next write,
    /// and whoever holds the lock now (or the next run) resumes exactly where it stopped.
    static func takenOver(_ why: String) -> RunError {
        RunError(
            "this run no longer holds the account's migrate lock (\(Printable.escaped(why, quotes: false))); it stopped before its next write, and the run holding the lock now — or the next \(Setting.migrateApply) — resumes exactly where it stopped"
        )
    }

    /// Stops renewing and releases the lease (a failure to release leaves it to expire). Sent
    /// from a task of its own: a run that was cancelled (Ctrl-C) still releases its lock.
    func release() async {
        renewal.withLock { $0?.cancel() }
        let blobs = self.blobs
        let id = self.id
        let name = self.name
        await Task.detached {
            try? await blobs.releaseLease(container: ReservedNames.ledgerContainer, name: name, id: id)
        }.value
    }
}
