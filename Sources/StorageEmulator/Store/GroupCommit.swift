import Foundation
import GRDB
import Synchronization

/// Group commit: write transactions that arrive together share one SQLite commit — one WAL
/// fsync — and one flush of the blob files they refer to (`ByteStore.makeDurable`); each is
/// acknowledged only after both are on disk.
///
/// Every write runs on this writer's own thread ("azseed.db-writer"), never on the Swift
/// cooperative pool or Dispatch's global queues: a commit blocks in fsync, and GRDB's own async
/// writes would block a global-queue thread (on a 2-core machine, the thread the rest of the
/// process needed). The thread takes whatever is queued (at most `maxGroup`), runs each write in
/// a savepoint of one transaction — a write that throws rolls back only its own savepoint and
/// gets its own error — commits once, then resumes every waiting task. Writes run one after
/// another in arrival order, so each sees the ones before it, exactly as with one transaction
/// each.
final class GroupCommit: Sendable {
    /// One queued write: `run` executes it inside the group's transaction and returns how to
    /// answer it once the commit succeeded (nil) or failed; `fail` answers it when it never ran.
    struct Job: Sendable {
        let run: @Sendable (Database) -> @Sendable ((any Error)?) -> Void
        let fail: @Sendable (any Error) -> Void
    }

    private static let maxGroup = 512
    private let writer: any DatabaseWriter
    /// Runs before each group's commit: makes the blob files its writes refer to durable.
    private let beforeCommit: @Sendable () throws -> Void
    private let queue = Mutex<Pending>(Pending())
    private let signal = NSCondition()

    private struct Pending: ~Copyable {
        var jobs: [Job] = []
        var stopped = false
        /// Set by the thread as it ends; `stop()` callers waiting for that.
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    init(writer: any DatabaseWriter, beforeCommit: @escaping @Sendable () throws -> Void) {
        self.writer = writer
        self.beforeCommit = beforeCommit
        // The dedicated thread: the only one that writes to the database.
        let thread = Thread { [self] in run() }
        thread.name = "azseed.db-writer"
        thread.start()
    }

    /// Runs `body` in the next group; returns its result once the group is committed.
    /// A `ServiceError` thrown inside rolls back this write alone and is rethrown as is.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = Job(run: { db in
                let result: Result<T, any Error>
                do {
                    var value: T?
                    try db.inSavepoint {
                        value = try body(db)
                        return .commit
                    }
                    result = .success(value!)
                } catch {
                    result = .failure(error)
                }
                return { commitError in
                    if let commitError, case .success = result {
                        continuation.resume(throwing: commitError)
                    } else {
                        continuation.resume(with: result)
                    }
                }
            }, fail: { continuation.resume(throwing: $0) })
            enqueue(job)
        }
    }

    private func enqueue(_ job: Job) {
        signal.lock()
        let stopped = queue.withLock { pending -> Bool in
            guard !pending.stopped else { return true }
            pending.jobs.append(job)
            return false
        }
        signal.signal()
        signal.unlock()
        if stopped { job.fail(ServiceError(500, "InternalError", "the storage is closed")) }
    }

    /// Asks the thread to end once the queued writes are committed, without waiting.
    func requestStop() {
        signal.lock()
        queue.withLock { $0.stopped = true }
        signal.signal()
        signal.unlock()
    }

    /// Ends the thread once the queued writes are committed and returns when it has: after
    /// this, nothing of this process writes to the database (the folder lock may go).
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            signal.lock()
            let exited = queue.withLock { pending -> Bool in
                pending.stopped = true
                if !pending.exited { pending.exitWaiters.append(continuation) }
                return pending.exited
            }
            signal.signal()
            signal.unlock()
            if exited { continuation.resume() }
        }
    }

    private func run() {
        while true {
            signal.lock()
            var taken: [Job] = []
            var stopped = false
            while true {
                (taken, stopped) = queue.withLock { pending in
                    let count = min(pending.jobs.count, Self.maxGroup)
                    let taken = Array(pending.jobs.prefix(count))
                    pending.jobs.removeFirst(count)
                    return (taken, pending.stopped)
                }
                if !taken.isEmpty || stopped { break }
                signal.wait()
            }
            signal.unlock()
            if taken.isEmpty && stopped {
                let waiters = queue.withLock { pending in
                    pending.exited = true
                    defer { pending.exitWaiters = [] }
                    return pending.exitWaiters
                }
                for waiter in waiters { waiter.resume() }
                return
            }
            commit(taken)
        }
    }

    private func commit(_ jobs: [Job]) {
        var finishers: [@Sendable ((any Error)?) -> Void] = []
        finishers.reserveCapacity(jobs.count)
        do {
            // Every file a write of this group refers to was finished before the write was
            // queued, so this one flush covers them all.
            try beforeCommit()
            // A synchronous GRDB call from this thread: GRDB runs it here, on the calling thread.
            try writer.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    for job in jobs { finishers.append(job.run(db)) }
                    return .commit
                }
            }
            for finish in finishers { finish(nil) }
        } catch {
            // The commit (or the transaction's start) failed: nothing of the group is stored.
            for finish in finishers { finish(error) }
            for job in jobs.dropFirst(finishers.count) { job.fail(error) }
        }
    }
}
