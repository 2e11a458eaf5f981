import Dispatch
import Foundation
import Synchronization

/// A fixed set of threads of azseed's own for calls that block (libcurl's easy perform).
///
/// Blocking work must not run on the Swift cooperative pool or on Dispatch's global queues:
/// with eight transfers in flight there, both global threads of a 2-core machine blocked and
/// the in-process emulator's database queue (on the same global pool) waited about a second
/// for libdispatch to add a thread — `apply` of 118 entities took 7 s. These threads are
/// created once and do nothing else; a job waits its turn when all are busy.
final class DedicatedThreads: Sendable {
    /// The transport's threads: more than the default `--concurrency` (8), so requests in
    /// flight rarely wait for one.
    static let transport = DedicatedThreads(count: 16, name: "azseed.transport")

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let ready = DispatchSemaphore(value: 0)

    init(count: Int, name: String) {
        for i in 0..<count {
            let thread = Thread { [self] in
                while true {
                    ready.wait()
                    let job = jobs.withLock { $0.removeFirst() }
                    job()
                }
            }
            thread.name = "\(name).\(i)"
            thread.start()
        }
    }

    /// Runs `body` on one of the threads and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            jobs.withLock { $0.append { continuation.resume(returning: body()) } }
            ready.signal()
        }
    }
}
