import Foundation
import Synchronization

/// Where a migration's operation (an undo's step) is: its phase, the entities (or blobs) read
/// of a counted total, how many it changed, and for how long the phase has run. Heard as
/// ``RunEvent/migrationProgress(_:)``: the CLI draws it, and prints it as JSON lines.
public struct MigrationProgress: Sendable, Equatable {
    /// What the operation is doing now.
    public enum Phase: String, Sendable, Equatable {
        /// Reading the table before the first write, to count what undo could not put back.
        case checkingForUndo = "checking for undo"
        /// Reading the entities the operation selects; none to change found yet.
        case reading
        /// Reading and writing: changes are being sent.
        case writing
        /// The operation ended (the checkpoint after it is recorded next).
        case finished
        /// Held by `azseed migrate control pause` (set by the observer that hears
        /// ``RunEvent/migrationControlled(_:)``; the run's own events never carry it).
        case paused
    }

    public var version: String
    public var description: String
    public var undoing: Bool
    /// The operation (an undo's step), from 1, of ``operations``.
    public var operation: Int
    public var operations: Int
    /// Its name (`rename-property`) and the table or container it works on.
    public var op: String
    public var table: String
    public var phase: Phase
    /// Entities (blobs) read in this phase.
    public var read: Int
    /// How many the phase reads in all — counted beside it, by a query that returns keys only —
    /// nil until known. A resumed run counts from its checkpoint.
    public var total: Int?
    /// Entities (blobs) the operation changed so far, as its count in the ledger.
    public var changed: Int
    /// Seconds since the phase began.
    public var seconds: Double

    /// How much of ``total`` is read, 0 to 100; nil while the total is not known.
    public var percent: Double? {
        guard let total else { return nil }
        return total == 0 ? 100 : min(100, Double(read) * 100 / Double(total))
    }

    /// Entities read per second in this phase.
    public var rate: Double { seconds > 0 ? Double(read) / seconds : 0 }

    /// Seconds left at this rate; nil while the total or the rate is not known.
    public var etaSeconds: Double? {
        guard let total, rate > 0 else { return nil }
        return Double(max(0, total - read)) / rate
    }
}

/// Counts one operation's progress across the tasks that read, count and write, and hands
/// every change to `emit` (the observer's ``RunEvent/migrationProgress(_:)``).
final class MigrationProgressMeter: Sendable {
    private struct State {
        var progress: MigrationProgress
        var started = ContinuousClock.now
    }
    private let state: Mutex<State>
    private let emit: @Sendable (MigrationProgress) -> Void

    init(_ progress: MigrationProgress, emit: @escaping @Sendable (MigrationProgress) -> Void) {
        state = Mutex(State(progress: progress))
        self.emit = emit
        emit(progress)
    }

    /// A new phase: its reads and its total start again (a resumed count is kept when the new
    /// phase reads what the old one counted).
    func begin(_ phase: MigrationProgress.Phase, total: Int? = nil) {
        update { s in
            guard s.progress.phase != phase else { return false }
            if phase != .writing {
                s.progress.read = 0
                s.progress.total = total
                s.started = .now
            }
            s.progress.phase = phase
            return true
        }
    }

    /// Entities read so far in this phase.
    func read(_ count: Int) {
        update {
            $0.progress.read = count
            return true
        }
    }

    /// The phase's total, once counted (kept when the phase has one already).
    func total(_ count: Int) {
        update { s in
            guard s.progress.total == nil else { return false }
            s.progress.total = count
            return true
        }
    }

    /// The operation's changes so far.
    func changed(_ count: Int) {
        update {
            $0.progress.changed = count
            return true
        }
    }

    /// Whether the phase has a total.
    var hasTotal: Bool { state.withLock { $0.progress.total != nil } }

    /// The operation ended with `changes`.
    func finish(changes: Int) {
        update { s in
            s.progress.changed = changes
            s.progress.phase = .finished
            // A count still under way when the scan ended: the scan read the whole of it.
            if s.progress.total == nil { s.progress.total = s.progress.read }
            return true
        }
    }

    private func update(_ change: (inout State) -> Bool) {
        let progress: MigrationProgress? = state.withLock { s in
            guard change(&s) else { return nil }
            let elapsed = ContinuousClock.now - s.started
            s.progress.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return s.progress
        }
        if let progress { emit(progress) }
    }
}
