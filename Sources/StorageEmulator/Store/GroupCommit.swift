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
    /// Pages given back per step when idle (16 MiB at 16 KiB pages): a step is a short write,
    /// so a request arriving meanwhile waits for one step at most, never for the whole reclaim.
    static let reclaimStep = 1024
    private let writer: any DatabaseWriter
    /// Whether freed pages are given back to the file system while idle (incremental vacuum;
    /// on-disk folders only).
    private let reclaims: Bool
    /// Set after every commit (it may have freed pages), cleared when the free list is empty.
    private let reclaimPending = Mutex(false)
    /// Set when a reclaim freed pages and the write-ahead log still holds them (a reader was in
    /// the way of cutting it): retried after ``truncateRetry`` of idleness.
    private let truncatePending = Mutex(false)
    private static let truncateRetry: TimeInterval = 0.25
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

    init(writer: any DatabaseWriter, reclaimsSpace: Bool = false, beforeCommit: @escaping @Sendable () throws -> Void) {
        self.writer = writer
        self.beforeCommit = beforeCommit
        reclaims = reclaimsSpace
        reclaimPending.withLock { $0 = reclaimsSpace }  // pages freed before this run (a reset, then a stop)
        // The dedicated thread: the only one that writes to the database.
        let thread = Thread { [self] in run() }
        thread.name = "azseed.db-writer"
        thread.start()
    }

    /// Runs `body` in the next group; returns its result once the group is committed.
    /// A `ServiceError` thrown inside rolls back this write alone and is rethrown as is.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = Job(
                run: { db in
                    let result: Result<T, any Error>
                    do {
                        result = .success(try Self.inSavepoint(db) { try body(db) })
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

    /// `body` in a savepoint of the group's transaction, rolled back alone when it throws. The
    /// statements are compiled once (GRDB's `inSavepoint` compiles its three each time: with
    /// the transaction's two, a twentieth of the emulator's time in a migration of small batches).
    static func inSavepoint<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.cachedStatement(sql: "SAVEPOINT job").execute()
        do {
            let value = try body()
            try db.cachedStatement(sql: "RELEASE SAVEPOINT job").execute()
            return value
        } catch {
            if db.isInsideTransaction {
                try db.cachedStatement(sql: "ROLLBACK TRANSACTION TO SAVEPOINT job").execute()
                try db.cachedStatement(sql: "RELEASE SAVEPOINT job").execute()
            }
            throw error
        }
    }

    /// The group's transaction, begun and committed by statements compiled once; rolled back
    /// whole when `body` or the commit throws.
    static func inTransaction(_ db: Database, _ body: () throws -> Void) throws {
        try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        do {
            try body()
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
        } catch {
            if db.isInsideTransaction { try? db.cachedStatement(sql: "ROLLBACK TRANSACTION").execute() }
            throw error
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
        if stopped { job.fail(ServiceError(500, .internalError, "the storage is closed")) }
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
                if reclaimPending.withLock({ $0 }) { break }  // idle: give freed space back, a step at a time
                if truncatePending.withLock({ $0 }) {
                    // Idle with a log to cut: try again once nothing has arrived for a moment.
                    if !signal.wait(until: Date().addingTimeInterval(Self.truncateRetry)) { break }
                    continue
                }
                signal.wait()
            }
            signal.unlock()
            if taken.isEmpty && !stopped {
                if reclaimPending.withLock({ $0 }) { reclaimStep() } else { truncateLog() }
                continue
            }
            if taken.isEmpty && stopped {
                if reclaims { checkpoint(truncating: true) }
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

    /// One step of incremental vacuum: up to ``reclaimStep`` free pages moved to the end of the
    /// file and cut off (in WAL mode the file shrinks at the next checkpoint). Ends the reclaim
    /// when the free list is empty, or on an error (space is then kept, data is not at risk).
    private func reclaimStep() {
        do {
            let (vacuumed, more) = try writer.writeWithoutTransaction { db -> (Bool, Bool) in
                guard try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0 > 0 else { return (false, false) }
                try db.execute(sql: "PRAGMA incremental_vacuum(\(Self.reclaimStep))")
                return (true, try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0 > 0)
            }
            if vacuumed { truncatePending.withLock { $0 = true } }
            if !more {
                reclaimPending.withLock { $0 = false }
                if truncatePending.withLock({ $0 }) { truncateLog() } else { checkpoint(truncating: false) }
            }
        } catch {
            reclaimPending.withLock { $0 = false }
        }
    }

    /// After a reclaim the freed pages sit in the write-ahead log until it is checkpointed and
    /// cut: the database file shrank, the log did not (25 MB after resetting 20,000 events).
    /// A truncating checkpoint that does not wait for readers (`busy_timeout` 0 for this call,
    /// so a request is never held up behind it); when a reader is in the way it is tried again
    /// after a moment of idleness.
    private func truncateLog() {
        do {
            let busy = try writer.writeWithoutTransaction { db -> Bool in
                try db.execute(sql: "PRAGMA busy_timeout = 0")
                defer { try? db.execute(sql: "PRAGMA busy_timeout = 30000") }
                let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                return (row?[0] as Int?) != 0
            }
            truncatePending.withLock { $0 = busy }
        } catch {
            truncatePending.withLock { $0 = false }  // the log is kept (valid); cut at the next stop
        }
    }

    /// Copies the WAL into the database file, which is where the file actually shrinks after an
    /// incremental vacuum. Once the reclaim is done, a passive checkpoint (it never waits for a
    /// reader); as the writer ends, a truncating one, so a stopped emulator leaves its folder
    /// compact and without a WAL whether or not SQLite's auto-checkpoint happened to run since
    /// (it does not run while a reader holds an older snapshot). Errors keep the space, not
    /// the data at risk: the WAL stays valid and is checkpointed at the next open.
    private func checkpoint(truncating: Bool) {
        _ = try? writer.writeWithoutTransaction { db in
            try db.execute(sql: truncating ? "PRAGMA wal_checkpoint(TRUNCATE)" : "PRAGMA wal_checkpoint(PASSIVE)")
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
                try Self.inTransaction(db) {
                    for job in jobs {
                        finishers.append(job.run(db))
                        // SQLite ended the whole transaction (a full disk, say): what the jobs
                        // before wrote is gone, so none of the group may be answered as stored.
                        guard db.isInsideTransaction else { throw ServiceError(500, .internalError, "the storage could not finish a write") }
                    }
                }
            }
            for finish in finishers { finish(nil) }
            if reclaims { reclaimPending.withLock { $0 = true } }
        } catch {
            // The commit (or the transaction's start) failed: nothing of the group is stored.
            for finish in finishers { finish(error) }
            for job in jobs.dropFirst(finishers.count) { job.fail(error) }
        }
    }
}
