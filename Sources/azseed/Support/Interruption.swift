import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Ctrl-C (SIGINT) and SIGTERM during a storage command: the command's task is cancelled, so
/// requests in flight are aborted and nothing starts after them; then one line says how far it
/// got and that a re-run finishes it, and the exit status is 130 (as shells report SIGINT). A
/// second signal ends the process at once. The handler only wakes a thread of its own, which
/// flags, cancels and starts the deadline thread; it never blocks.
enum Interruption {
    private static let interrupted = Atomic<Bool>(false)
    /// The last progress a command reported: what was done of what, and whether it writes.
    private static let progress = Mutex<(done: Int, total: Int?, writing: Bool)?>(nil)

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
    ///
    /// A plain `sigaction` handler, taking effect before this returns, writes a byte to a pipe
    /// (all a handler may safely do) and a thread of its own reads it. Dispatch signal sources
    /// needed the signals ignored and received them through a `signalfd` that only sees a
    /// signal every thread blocks: a Ctrl-C landing on any other thread was discarded, and a
    /// `plan` interrupted after its first 50 ms finished as if nothing had happened (13 of 24
    /// tries).
    static func install(cancel: @escaping @Sendable () -> Void) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }  // no pipe: the signals keep their default (end the process)
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        signalPipe = fds[1]
        let readEnd = fds[0]
        let reader = Thread {
            var byte: UInt8 = 0
            while true {
                let n = read(readEnd, &byte, 1)
                if n < 0 && errno == EINTR { continue }
                guard n == 1 else { return }
                received(cancel: cancel)
            }
        }
        reader.name = "azseed.signals"
        reader.start()
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            let saved = errno
            var byte: UInt8 = 1
            _ = write(Interruption.signalPipe, &byte, 1)
            errno = saved
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        for number in [SIGINT, SIGTERM] { sigaction(number, &action, nil) }
    }

    /// The write end of the pipe the handler writes to; set once, before the handler is.
    nonisolated(unsafe) private static var signalPipe: Int32 = -1

    /// On the dedicated signal thread ("azseed.signals", which blocks in `read`): flags,
    /// cancels and starts the deadline.
    private static func received(cancel: @Sendable () -> Void) {
        if interrupted.exchange(true, ordering: .relaxed) { Foundation.exit(130) }
        cancel()
        // Work that does not look at cancellation (generating a large dataset) would outlive
        // the signal: after 5 s the process ends anyway, with the same line. The wait and the
        // write (stderr may be a full pipe) block, so they run on a dedicated `Thread`
        // ("azseed.interrupt-deadline"), never on the cooperative pool or Dispatch's queues.
        let deadline = Thread {
            Thread.sleep(forTimeInterval: 5)
            FileHandle.standardError.write(Data((Failure.lineStart + message + "\n").utf8))
            Foundation.exit(130)
        }
        deadline.name = "azseed.interrupt-deadline"
        deadline.start()
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
