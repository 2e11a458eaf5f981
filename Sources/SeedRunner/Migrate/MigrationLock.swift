import AzureStorage
import Foundation
import SeedKit
import Synchronization

/// One `migrate apply` (or `repair`, `baseline`) per account at a time: a lease on blob
/// `migrate.lock` in azseed's container (``ReservedNames/ledgerContainer``), taken for 60 s,
/// renewed every 20 s while the run lasts and released at its end. A run whose renewal fails
/// stops at its next checkpoint. The blob holds who took it, so a refusal can say.
final class MigrationLock: Sendable {
    static let blob = "migrate.lock"
    static let seconds = 60
    static let renewEvery: Duration = .seconds(20)

    let blobs: BlobClient
    let id: String
    private let lost = Mutex<String?>(nil)
    private let renewal = Mutex<Task<Void, Never>?>(nil)

    private init(blobs: BlobClient, id: String) {
        self.blobs = blobs
        self.id = id
    }

    /// Takes the lock, waiting up to `timeout` for another run to end.
    static func acquire(_ blobs: BlobClient, holder: String, timeout: Duration, observer: any RunObserver) async throws -> MigrationLock {
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
            let lock = MigrationLock(blobs: blobs, id: UUID().uuidString.lowercased())
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

    /// Ends whoever holds the lock, at once (`repair --break-lock`) — refused when the holder is a
    /// process of this machine that is still running (it would go on writing beside the next run).
    static func breakLock(_ blobs: BlobClient, host: String) async throws -> Bool {
        if let data = try? await blobs.download(container: ReservedNames.ledgerContainer, name: blob),
            let text = String(data: data.prefix(512), encoding: .utf8),
            let match = text.firstMatch(of: #/^.* on (.+), pid (\d+), since /#), String(match.1) == host,
            let pid = Int32(match.2), pid != getpid(), kill(pid, 0) == 0 || errno == EPERM
        {
            throw RunError(
                "the account's migrate lock is held by process \(pid) of this machine, which is still running (\(Printable.escaped(text, quotes: false))); stop it (Ctrl-C releases the lock), then run again"
            )
        }
        do {
            try await blobs.breakLease(container: ReservedNames.ledgerContainer, name: blob, period: 0)
            return true
        } catch let error as AzureStorageError where error.status == 404 || error.code == .leaseNotPresentWithLeaseOperation {
            return false
        } catch {
            throw RunError.explaining(error, while: "breaking azseed's migrate lock")
        }
    }

    private func startRenewing() {
        let blobs = self.blobs
        let id = self.id
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.renewEvery)
                if Task.isCancelled { return }
                do {
                    try await blobs.renewLease(container: ReservedNames.ledgerContainer, name: Self.blob, id: id)
                } catch {
                    self?.lost.withLock { $0 = "\(error)" }
                    return
                }
            }
        }
        renewal.withLock { $0 = task }
    }

    /// Throws when the lock could not be renewed: the run must stop before its next write.
    func check() throws {
        if let why = lost.withLock({ $0 }) {
            throw RunError("the account's migrate lock was lost (\(why)); the run stopped at a checkpoint, run apply again to resume")
        }
    }

    /// Stops renewing and releases the lease (a failure to release leaves it to expire). Sent
    /// from a task of its own: a run that was cancelled (Ctrl-C) still releases its lock.
    func release() async {
        renewal.withLock { $0?.cancel() }
        let blobs = self.blobs
        let id = self.id
        await Task.detached {
            try? await blobs.releaseLease(container: ReservedNames.ledgerContainer, name: Self.blob, id: id)
        }.value
    }
}
