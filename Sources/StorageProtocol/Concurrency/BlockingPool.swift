import Foundation
import Synchronization

/// Threads of azseed's own for blocking work — file reads and writes, fsync, directory walks —
/// so that none of it runs on the Swift cooperative pool or Dispatch's global queues, where a
/// slow disk would hold a thread the rest of the process needs (on 2 cores, all of them).
///
/// Four threads, started on first use and kept for the process: enough to overlap a few
/// disk waits, few enough that blocking work cannot crowd out the CPU-bound work. The library
/// reads and writes transfer files here, SeedRunner and the CLI snapshots, and the emulator
/// its blob bytes and database reads.
public final class BlockingPool: Sendable {
    /// The process's pool.
    public static let shared = BlockingPool(threads: 4)

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let signal = NSCondition()

    private init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { [self] in work() }
            thread.name = "azseed.blocking-\(index)"
            thread.start()
        }
    }

    /// Runs `body` on one of the pool's threads and returns its result.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            shared.submit { continuation.resume(with: Result { try body() }) }
        }
    }

    private func submit(_ job: @escaping @Sendable () -> Void) {
        signal.lock()
        jobs.withLock { $0.append(job) }
        signal.signal()
        signal.unlock()
    }

    private func work() {
        while true {
            signal.lock()
            var job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            while job == nil {
                signal.wait()
                job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            }
            signal.unlock()
            job?()
        }
    }
}
