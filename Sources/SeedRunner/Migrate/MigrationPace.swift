import AzureStorage
import Foundation
import Synchronization

/// How fast a migration writes, as the service allows.
///
/// How many batches (or moves) may be in flight adapts as TCP's window and gh-ost's throttle
/// do: it starts at the ceiling, grows by about one per round of answers while the service
/// answers without a busy answer and no slower than twice the fastest answer seen, and halves —
/// at most once a second — when it answers 503 ServerBusy, 429 or a 5xx such as 500
/// OperationTimedOut, which Azure sends to ask clients to back off. With `--max-rate N`, entities
/// per second are capped as well: each batch waits for its slot.
final class MigrationPace: Sendable {
    private struct State {
        var limit: Double
        var fastest: Double?
        var lastHalved: ContinuousClock.Instant?
        var nextSlot: ContinuousClock.Instant
    }

    /// A batch sent: what the counters said then, and when.
    struct Sent: Sendable {
        var busy: Int
        var at: ContinuousClock.Instant
    }

    let ceiling: Int
    /// Entities per second at most; nil: no cap.
    let maxRate: Int?
    /// What `migrate control` asks (a pause, a cancel, a rate in place of ``maxRate``).
    let control: MigrationControlWatcher?
    private let activity: RequestActivity
    private let state: Mutex<State>

    init(ceiling: Int, maxRate: Int?, activity: RequestActivity, control: MigrationControlWatcher? = nil) {
        self.ceiling = max(1, ceiling)
        self.maxRate = maxRate
        self.control = control
        self.activity = activity
        state = Mutex(State(limit: Double(max(1, ceiling)), fastest: nil, lastHalved: nil, nextSlot: .now))
    }

    /// Batches that may be in flight now.
    var limit: Int { state.withLock { Int($0.limit) } }

    /// Waits until `entities` more may be written under the rate cap (none without one) and
    /// while `migrate control` pauses the run, and notes the batch as sent. A cancel asked
    /// meanwhile throws.
    func admit(_ entities: Int) async throws -> Sent {
        try await control?.gate()
        while entities > 0, let rate = control?.maxRate ?? maxRate, rate > 0 {
            let wait = state.withLock { s -> Duration? in
                let now = ContinuousClock.now
                let start = max(now, s.nextSlot)
                // Slots are taken at most a second ahead, so a rate or a pause `migrate
                // control` sets meanwhile holds for every batch still waiting.
                guard start - now <= .seconds(1) else { return nil }
                // The batch takes its own slot, the first one too: N entities take N / rate.
                s.nextSlot = start + .microseconds(Int64(entities) * 1_000_000 / Int64(rate))
                return s.nextSlot - now
            }
            guard var left = wait else {
                try await Task.sleep(for: .seconds(1))
                try await control?.gate()
                continue
            }
            // Waited a second at a time: a pause or a cancel asked meanwhile is obeyed.
            while left > .zero {
                let piece = min(left, .seconds(1))
                try await Task.sleep(for: piece)
                left -= piece
                if left > .zero { try await control?.gate() }
            }
            try await control?.gate()
            break
        }
        return Sent(busy: activity.snapshot.busy, at: .now)
    }

    /// A batch answered (done, or given up): halve on busy answers since it was sent, else grow.
    func answered(_ sent: Sent) {
        let now = ContinuousClock.now
        let busy = activity.snapshot.busy > sent.busy
        let elapsed = now - sent.at
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        state.withLock { s in
            if busy {
                guard s.lastHalved.map({ now - $0 >= .seconds(1) }) ?? true else { return }
                s.limit = max(1, s.limit / 2)
                s.lastHalved = now
            } else {
                s.fastest = min(s.fastest ?? seconds, seconds)
                if seconds <= 2 * (s.fastest ?? seconds) { s.limit = min(Double(ceiling), s.limit + 1 / s.limit) }
            }
        }
    }
}
