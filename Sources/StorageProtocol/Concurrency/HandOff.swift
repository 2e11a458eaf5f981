import Foundation
import Synchronization

/// Hands values from one producing thread to one consuming thread, at most `capacity` waiting
/// at once: two stages of CPU work (making entities, observing them) run on both cores, and
/// memory stays bounded whichever stage is slower.
///
/// ``run(capacity:produce:consume:)`` is the whole use: the producer runs on a thread of its
/// own, the consumer on the caller's (a blocking context: `BlockingPool`, never the
/// cooperative pool). An error on either side stops both and is thrown once both have stopped.
public final class HandOff<Element: Sendable>: Sendable {
    private struct State: Sendable {
        var queue: [Element] = []
        var head = 0
        var finished = false
        var failure: (any Error)?
        /// The consumer stopped: the producer's next ``put(_:)`` throws ``Stopped``.
        var stopped = false
    }

    /// Thrown by ``put(_:)`` once the consumer has stopped: the producer ends its loop.
    public struct Stopped: Error {}

    private let capacity: Int
    private let state = Mutex(State())
    private let signal = NSCondition()

    private init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Runs `produce` on a thread of its own, handing each value it puts to `consume` on the
    /// calling thread, in order; returns when both are done (the producer's thread has ended).
    public static func run(
        capacity: Int, produce: @escaping @Sendable (_ put: (Element) throws -> Void) throws -> Void, consume: (Element) throws -> Void
    ) throws {
        let channel = HandOff(capacity: capacity)
        let ended = HandOffLatch()
        let thread = Thread {
            do {
                try produce { try channel.put($0) }
                channel.finish(nil)
            } catch {
                channel.finish(error is Stopped ? nil : error)
            }
            ended.open()
        }
        thread.name = "azseed.hand-off"
        thread.start()
        do {
            while let value = try channel.take() { try consume(value) }
        } catch {
            channel.stop()
            ended.wait()
            throw error
        }
        ended.wait()
    }

    private func put(_ value: Element) throws {
        signal.lock()
        defer { signal.unlock() }
        while true {
            let (stopped, full) = state.withLock { ($0.stopped, $0.queue.count - $0.head >= capacity) }
            if stopped { throw Stopped() }
            if !full { break }
            signal.wait()
        }
        state.withLock { $0.queue.append(value) }
        signal.broadcast()
    }

    private func finish(_ failure: (any Error)?) {
        signal.lock()
        state.withLock {
            $0.finished = true
            $0.failure = failure
        }
        signal.broadcast()
        signal.unlock()
    }

    private func stop() {
        signal.lock()
        state.withLock { $0.stopped = true }
        signal.broadcast()
        signal.unlock()
    }

    private func take() throws -> Element? {
        signal.lock()
        defer { signal.unlock() }
        while true {
            let next: Result<Element?, any Error>? = state.withLock { state in
                if state.head < state.queue.count {
                    let value = state.queue[state.head]
                    state.head += 1
                    // Compacted once the taken half is the larger: amortized O(1) a value.
                    if state.head * 2 >= state.queue.count {
                        state.queue.removeFirst(state.head)
                        state.head = 0
                    }
                    return .success(value)
                }
                if state.finished { return state.failure.map { .failure($0) } ?? .success(nil) }
                return nil
            }
            if let next {
                signal.broadcast()
                return try next.get()
            }
            signal.wait()
        }
    }
}

/// Opened once by a thread that ends; waited on by the one that started it.
private final class HandOffLatch: Sendable {
    private let isOpen = Mutex(false)
    private let signal = NSCondition()

    func open() {
        signal.lock()
        isOpen.withLock { $0 = true }
        signal.broadcast()
        signal.unlock()
    }

    func wait() {
        signal.lock()
        while !isOpen.withLock({ $0 }) { signal.wait() }
        signal.unlock()
    }
}
