import Foundation
import Synchronization

/// Writes lines to file descriptors from a thread of its own, in the order they were handed
/// over: callers on the cooperative pool enqueue and return at once, and the blocking
/// `write(2)` calls (a slow disk, a terminal or a pipe nobody reads) happen on this thread only.
/// Each line is written whole with one call, so a log file is flushed line by line.
public final class LineWriter: Sendable {
    /// The process's writer (request logs, progress lines).
    public static let shared = LineWriter()

    private let pending = Mutex<[(fd: Int32, bytes: [UInt8])]>([])
    private let written = Mutex(0)
    private let queued = Mutex(0)
    private let signal = NSCondition()

    private init() {
        let thread = Thread { [self] in work() }
        thread.name = "azseed.line-writer"
        thread.start()
    }

    /// Queues `bytes` for `fd`.
    public func write(_ bytes: [UInt8], to fd: Int32) {
        signal.lock()
        pending.withLock { $0.append((fd, bytes)) }
        queued.withLock { $0 += 1 }
        signal.broadcast()
        signal.unlock()
    }

    /// Waits (on this thread's condition, from a blocking context) until everything queued so
    /// far is written: at the end of a run, before the process exits.
    public func drain() {
        let target = queued.withLock { $0 }
        signal.lock()
        while written.withLock({ $0 }) < target { signal.wait() }
        signal.unlock()
    }

    private func work() {
        while true {
            signal.lock()
            var batch = pending.withLock { items in
                defer { items.removeAll() }
                return items
            }
            while batch.isEmpty {
                signal.wait()
                batch = pending.withLock { items in
                    defer { items.removeAll() }
                    return items
                }
            }
            signal.unlock()
            for item in batch {
                item.bytes.withUnsafeBytes { raw in
                    var offset = 0
                    while offset < raw.count {
                        let n = Foundation.write(item.fd, raw.baseAddress! + offset, raw.count - offset)
                        if n < 0 && errno == EINTR { continue }
                        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                            // A non-blocking descriptor inherited from the parent (a pipe it
                            // reads slowly): wait until it takes more, on this thread, rather
                            // than drop the rest of a line — it may be the JSON result.
                            var ready = pollfd(fd: item.fd, events: Int16(POLLOUT), revents: 0)
                            _ = poll(&ready, 1, 1000)
                            continue
                        }
                        if n <= 0 { break }  // a closed pipe: drop the rest of the line
                        offset += n
                    }
                }
            }
            signal.lock()
            written.withLock { $0 += batch.count }
            signal.broadcast()
            signal.unlock()
        }
    }
}
