import Dispatch
import Foundation
import Synchronization

/// Ctrl-C (SIGINT) and SIGTERM during a storage command: the command's task is cancelled, so
/// requests in flight are aborted and nothing starts after them; then one line says how far it
/// got and that a re-run finishes it, and the exit status is 130 (as shells report SIGINT). A
/// second signal ends the process at once. The signals are received by Dispatch sources, on
/// Dispatch's queue: the handler only flags, cancels and starts the deadline thread; it never blocks.
enum Interruption {
    private static let interrupted = Atomic<Bool>(false)
    /// The last progress a command reported: what was done of what, and whether it writes.
    private static let progress = Mutex<(done: Int, total: Int?, writing: Bool)?>(nil)
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    static var happened: Bool { interrupted.load(ordering: .relaxed) }

    /// What a command that keeps its own progress says instead (`migrate apply`: the ledger).
    private static let ownMessage = Mutex<String?>(nil)

    /// Sets the one line an interrupted command prints, for commands whose progress is not
    /// the progress display's.
    static func say(_ message: String) { ownMessage.withLock { $0 = message } }

    /// Called by the progress display with every update.
    static func record(done: Int, total: Int?, writing: Bool) {
        progress.withLock { $0 = (done, total, writing) }
    }

    /// Routes SIGINT and SIGTERM to `cancel` (once; a second signal exits with 130).
    static func install(cancel: @escaping @Sendable () -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if interrupted.exchange(true, ordering: .relaxed) { Foundation.exit(130) }
                cancel()
                // Work that does not look at cancellation (generating a large dataset) would
                // outlive the signal: after 5 s the process ends anyway, with the same line. The
                // wait and the write (stderr may be a full pipe) run on a thread of their own,
                // not on Dispatch's global queues.
                let deadline = Thread {
                    Thread.sleep(forTimeInterval: 5)
                    FileHandle.standardError.write(Data((Failure.lineStart + message + "\n").utf8))
                    Foundation.exit(130)
                }
                deadline.name = "azseed.interrupt-deadline"
                deadline.start()
            }
            source.resume()
            sources.append(source)
        }
    }

    /// The one line printed when an interrupted command ends.
    static var message: String {
        if let own = ownMessage.withLock({ $0 }) { return own }
        return switch progress.withLock({ $0 }) {
        case (let done, let total?, true)?:
            "azseed: interrupted after \(done) of \(total) changes; each blob and entity batch is written whole or not at all, so nothing is half-written — run the same command again to finish"
        case (let done, _, false)?:
            "azseed: interrupted while reading (\(done) read); nothing was written — run the same command again"
        default:
            "azseed: interrupted before any change was written; run the same command again"
        }
    }
}
