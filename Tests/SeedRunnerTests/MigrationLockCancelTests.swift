import AzseedTestSupport
import AzureStorage
import Foundation
import Synchronization
import Testing

@testable import SeedRunner

/// A run stopped (Ctrl-C, a cancelled task) while it takes the migrate lock gives it back: the
/// next run takes it at once instead of waiting out the lease.
@Suite struct MigrationLockCancelTests {
    /// Stopped while it looked for the other kind of lock (a shard's), after its lease was
    /// taken: that way out kept the lease (a cancellation is not a storage error), and the
    /// next run was refused until the lease ran out (`MigrationUndoRunTests` met it by chance).
    @Test func aRunStoppedWhileItLooksAtTheOtherLocksGivesItsLockBack() async throws {
        try await TestEmulator.withRunning { server in
            let curl = CurlTransport()
            let listing = Atomic(false)
            let slowList = ClosureTransport { request in
                if request.query.contains(where: { $0.name == "comp" && $0.value == "list" }) {
                    listing.store(true, ordering: .sequentiallyConsistent)
                    try await Task.sleep(for: .seconds(30))  // until the run is stopped
                }
                return try await curl.send(request)
            }
            let run = Task {
                try await MigrationLock.acquire(
                    BlobClient(account: server.account, transport: slowList), holder: "stopped run", timeout: .zero, observer: SilentObserver())
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while !listing.load(ordering: .sequentiallyConsistent) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            let listed = listing.load(ordering: .sequentiallyConsistent)
            #expect(listed, "the run never listed the locks")
            run.cancel()
            await #expect(throws: (any Error).self) { _ = try await run.value }
            // Free at once: another run takes it without waiting.
            let next = try await MigrationLock.acquire(
                BlobClient(account: server.account), holder: "next run", timeout: .zero, observer: SilentObserver())
            await next.release()
        }
    }
}
