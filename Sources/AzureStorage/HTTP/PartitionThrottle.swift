import Foundation
import Synchronization

/// Backs off per table partition when the service throttles it (503 ServerBusy, 429): a
/// partition takes about 2,000 entities/s, and retrying each request on its own keeps hitting
/// the partition that is already saturated. After a throttled answer, requests to that
/// partition are spaced `delay` apart (doubling on each further throttle, up to 10 s, halving
/// on each success until it is gone), so the batches of one process — and N shard processes,
/// each seeing the same answers — slow down together instead of retrying into it. Other
/// partitions are not slowed.
public final class PartitionThrottle: Sendable {
    private struct State {
        var delay: Duration
        var next: Date
        /// When the spacing last changed: a success halves it at most once per `delay`, so the
        /// answers to requests already in flight when the throttle came do not undo it.
        var changed: Date
    }
    private let states = Mutex<[String: State]>([:])

    static let first: Duration = .milliseconds(200)
    static let ceiling: Duration = .seconds(10)
    static let floor: Duration = .milliseconds(25)

    public init() {}

    /// How long to wait before sending to `key` now; reserves the slot.
    func admit(_ key: String, now: Date) -> Duration? {
        states.withLock { states in
            guard var state = states[key] else { return nil }
            let start = max(now, state.next)
            state.next = start.addingTimeInterval(Self.seconds(state.delay))
            states[key] = state
            let wait = start.timeIntervalSince(now)
            return wait > 0 ? .milliseconds(Int64(wait * 1000)) : nil
        }
    }

    /// Notes an answer from `key`'s partition.
    func record(_ key: String, throttled: Bool, now: Date) {
        states.withLock { states in
            if throttled {
                let delay = min(states[key].map { $0.delay * 2 } ?? Self.first, Self.ceiling)
                // Slots already handed out stay taken: the next one is after them, or a delay from now.
                let next = max(states[key]?.next ?? now, now.addingTimeInterval(Self.seconds(delay)))
                states[key] = State(delay: delay, next: next, changed: now)
            } else if var state = states[key], now.timeIntervalSince(state.changed) >= Self.seconds(state.delay) {
                state.delay = state.delay / 2
                state.changed = now
                // Gone once small and no reserved slot is ahead.
                if state.delay < Self.floor, state.next <= now { states[key] = nil } else { states[key] = state }
            }
        }
    }

    /// The spacing in force for `key` (tests, progress).
    public func delay(of key: String) -> Duration? { states.withLock { $0[key]?.delay } }

    static func seconds(_ d: Duration) -> TimeInterval {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
