import AzureStorage
import Foundation
import SeedKit
import Synchronization

/// A running apply's (or undo's) ear for `azseed migrate control`: reads the control record
/// when the run starts and every ``interval`` after, and at each checkpoint and each batch
/// ``gate()`` obeys it — waits while paused, stops on a cancel asked since the run started —
/// and ``maxRate`` gives the rate the pace keeps. A pause therefore holds within one interval
/// plus a batch in flight; the default of 5 s keeps that well under 15 s.
final class MigrationControlWatcher: Sendable {
    private struct State {
        var control: MigrationControl
        /// The cancel id read when the run started: only a cancel asked after stops it.
        var cancelAtStart: String?
        /// The last damaged record noted, so it is said once.
        var damage: String?
        var stopped = false
    }
    private let state: Mutex<State>
    private let poller = Mutex<Task<Void, Never>?>(nil)
    private let ledger: Ledger
    private let observer: any RunObserver
    /// How often the record is read while the run goes on.
    let interval: Duration

    private init(ledger: Ledger, observer: any RunObserver, interval: Duration, control: MigrationControl, damage: String?) {
        self.ledger = ledger
        self.observer = observer
        self.interval = interval
        state = Mutex(State(control: control, cancelAtStart: control.cancelID, damage: damage))
    }

    /// Reads the record and starts reading it every `interval`; says so when the target is
    /// paused or rate-capped already.
    static func start(ledger: Ledger, observer: any RunObserver, interval: Duration) async throws -> MigrationControlWatcher {
        let control: MigrationControl
        var damage: String?
        do {
            control = try await ledger.control().0
        } catch let error as MigrationControlDamaged {
            (control, damage) = (MigrationControl(), error.description)
            observer.note(error.phrase + "; ignored (azseed migrate control resume writes a new one)")
        }
        let watcher = MigrationControlWatcher(ledger: ledger, observer: observer, interval: interval, control: control, damage: damage)
        if !control.isQuiet { observer.event(.migrationControlled(control)) }
        if control.paused {
            observer.note(Phrase(verbatim: "the target's migrations are \(control.summary); writes wait for 'azseed migrate control resume'"))
        } else if let rate = control.maxRate {
            observer.note("writing at most \(rate) entities a second, as migrate control asks")
        }
        watcher.poller.withLock { $0 = Task { [weak watcher] in await watcher?.poll() } }
        return watcher
    }

    /// Ends the reads (the run is over).
    func stop() {
        state.withLock { $0.stopped = true }
        poller.withLock { $0?.cancel() }
    }

    /// The rate `migrate control rate N` set, if any.
    var maxRate: Int? { state.withLock { $0.control.maxRate } }

    /// Returns when writes may go on: at once unless paused; throws when a cancel was asked
    /// since the run started.
    func gate() async throws {
        while true {
            let (control, cancelled) = state.withLock { s in (s.control, s.control.cancelID.map { $0 != s.cancelAtStart } ?? false) }
            if cancelled {
                throw RunError(
                    "cancelled by 'azseed migrate control cancel' (\(control.who)); what was written is kept and recorded: the migration under way stays at its last checkpoint, and running the same command again resumes it"
                )
            }
            guard control.paused else { return }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    private func poll() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard !Task.isCancelled else { return }
            await read()
        }
    }

    /// Reads the record once, taking what it asks and saying what changed. A read that fails
    /// keeps what was read last (the run's own requests meet the same trouble and say so).
    func read() async {
        let next: MigrationControl
        var damage: String?
        do {
            next = try await ledger.control().0
        } catch let error as MigrationControlDamaged {
            (next, damage) = (MigrationControl(), error.description)
        } catch {
            return
        }
        let (before, sayDamage) = state.withLock { s -> (MigrationControl?, Bool) in
            guard !s.stopped else { return (nil, false) }
            let before = s.control
            let say = damage != nil && damage != s.damage
            s.damage = damage
            // A damaged record is ignored: what was read last stands (a cancel seen stays seen).
            if damage == nil { s.control = next }
            return (before, say)
        }
        guard let before, damage == nil || sayDamage else { return }
        if sayDamage, let damage { observer.note(Phrase(verbatim: damage + "; ignored")) }
        guard damage == nil else { return }
        if next.paused != before.paused || next.maxRate != before.maxRate { observer.event(.migrationControlled(next)) }
        if next.paused && !before.paused {
            observer.note(Phrase(verbatim: "paused by migrate control (\(next.who)); writes wait for 'azseed migrate control resume'"))
        } else if !next.paused && before.paused {
            observer.note("resumed by migrate control")
        }
        if next.maxRate != before.maxRate {
            observer.note(
                next.maxRate.map { "writing at most \($0) entities a second, as migrate control asks" } ?? "migrate control lifted its rate cap")
        }
    }
}
