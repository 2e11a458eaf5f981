import Foundation
import Synchronization

/// Progress of an apply: operations (blobs and entities) and blob bytes done of the totals, and
/// the phase under way — blobs, then each kind (or snapshot table), then deletes.
public struct ExecutionProgress: Sendable {
    public var done: Int
    public var total: Int
    /// Blob bytes written (uploaded or copied) of those to write.
    public var bytesDone: Int
    public var bytesTotal: Int
    /// "blobs", "events/Event", "events deletes"; nil before the first phase.
    public var phase: String?
    public var phaseDone: Int
    public var phaseTotal: Int
    /// Seconds since the apply began.
    public var seconds: Double
}

/// A phase of an apply and how long it took.
public struct PhaseTiming: Sendable, Equatable {
    public var name: String
    public var items: Int
    public var seconds: Double
}

/// Bytes counted across concurrent tasks.
final class BlobByteCount: Sendable {
    private let total = Mutex(0)
    func add(_ n: Int) { total.withLock { $0 += n } }
    var value: Int { total.withLock { $0 } }
}

/// Counts finished operations across concurrent tasks, times the phases and reports progress.
final class ProgressCounter: Sendable {
    private struct State {
        var done = 0, bytesDone = 0
        var phase: String?
        var phaseDone = 0, phaseTotal = 0
        var phaseStarted = Date()
        var phases: [PhaseTiming] = []
    }

    private let state = Mutex(State())
    private let total: Int
    private let bytesTotal: Int
    private let started = Date()
    private let report: (@Sendable (ExecutionProgress) -> Void)?

    init(total: Int, bytesTotal: Int, report: (@Sendable (ExecutionProgress) -> Void)?) {
        self.total = total
        self.bytesTotal = bytesTotal
        self.report = report
        report?(ExecutionProgress(done: 0, total: total, bytesDone: 0, bytesTotal: bytesTotal, phase: nil, phaseDone: 0, phaseTotal: 0, seconds: 0))
    }

    func begin(phase: String, items: Int) {
        let progress = state.withLock { s in
            s.phase = phase
            s.phaseDone = 0
            s.phaseTotal = items
            s.phaseStarted = Date()
            return snapshot(s)
        }
        report?(progress)
    }

    func end() {
        state.withLock { s in
            guard let phase = s.phase else { return }
            s.phases.append(PhaseTiming(name: phase, items: s.phaseTotal, seconds: Date().timeIntervalSince(s.phaseStarted)))
        }
    }

    func add(_ n: Int, bytes: Int) {
        let progress = state.withLock { s in
            s.done += n
            s.phaseDone += n
            s.bytesDone += bytes
            return snapshot(s)
        }
        report?(progress)
    }

    var phases: [PhaseTiming] { state.withLock { $0.phases } }

    private func snapshot(_ s: State) -> ExecutionProgress {
        ExecutionProgress(
            done: s.done, total: total, bytesDone: s.bytesDone, bytesTotal: bytesTotal, phase: s.phase,
            phaseDone: s.phaseDone, phaseTotal: s.phaseTotal, seconds: Date().timeIntervalSince(started))
    }
}
