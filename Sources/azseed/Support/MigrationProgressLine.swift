import AzureStorage
import Foundation
import SeedRunner
import Synchronization

/// A migration's progress on stderr: on a terminal one line redrawn in place; on a pipe (or a
/// log) a line every 5 seconds, whether or not the run moved; with `--output json`, the same
/// cadence as JSON lines (`{"event":"progress",…}`), and one when each operation ends — stdout
/// keeps its one document.
final class MigrationProgressLine: Sendable {
    private struct State {
        var latest: MigrationProgress?
        var lastDraw: ContinuousClock.Instant?
        var drewInPlace = false
        var ticker: Task<Void, Never>?
        /// `migrate control pause` holds the run: the lines say so, without a rate or an ETA.
        var paused = false
    }
    private let state = Mutex(State())
    private let json: Bool
    private let inPlace: Bool
    private let activity: RequestActivity?
    /// Seconds between lines on a pipe.
    static let interval = 5.0

    init(json: Bool, activity: RequestActivity?) {
        self.json = json
        inPlace = !json && Console.stderrIsTerminal && !Console.requestLinesOnStderr.load(ordering: .relaxed)
        self.activity = activity
    }

    func update(_ progress: MigrationProgress) {
        let now = ContinuousClock.now
        let draw: Bool = state.withLock { s in
            s.latest = progress
            if !inPlace && s.ticker == nil { s.ticker = Task { [weak self] in await self?.tick() } }
            guard inPlace else { return json && progress.phase == .finished }
            // The operation's end is said by the note after it: the line is cleared, not drawn.
            if progress.phase == .finished {
                if s.drewInPlace { LineWriter.shared.write(Array("\r\u{1B}[2K".utf8), to: STDERR_FILENO) }
                s.drewInPlace = false
                return false
            }
            if let last = s.lastDraw, now - last < .milliseconds(100) { return false }
            s.lastDraw = now
            s.drewInPlace = true
            return true
        }
        if draw { print(progress) }
    }

    /// The run is paused (or resumed) by `migrate control`: drawn at once.
    func paused(_ paused: Bool) {
        let latest = state.withLock { s in
            s.paused = paused
            return s.latest
        }
        if let latest { print(latest) }
    }

    /// Stops the lines: clears the one drawn in place, ends the ticker.
    func finish() {
        let (drew, ticker) = state.withLock { s in
            defer {
                s.ticker = nil
                s.latest = nil
            }
            return (s.drewInPlace, s.ticker)
        }
        ticker?.cancel()
        if drew { LineWriter.shared.write(Array("\r\u{1B}[2K".utf8), to: STDERR_FILENO) }
    }

    /// Every ``interval`` seconds, the latest progress of an operation still under way.
    private func tick() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(Self.interval))
            guard !Task.isCancelled, let latest = state.withLock({ $0.latest }), latest.phase != .finished else { continue }
            print(latest)
        }
    }

    private func print(_ progress: MigrationProgress) {
        var progress = progress
        if state.withLock({ $0.paused }), progress.phase != .finished { progress.phase = .paused }
        if json {
            LineWriter.shared.write(Array((MigrationPrinting.json(progress, retries: retries).compact() + "\n").utf8), to: STDERR_FILENO)
        } else if inPlace {
            LineWriter.shared.write(Array("\r\u{1B}[2K\(Self.text(progress, bar: true, retries: retries))".utf8), to: STDERR_FILENO)
        } else {
            LineWriter.shared.write(Array("azseed: \(Self.text(progress, bar: false, retries: retries))\n".utf8), to: STDERR_FILENO)
        }
    }

    private var retries: (retries: Int, throttled: Int) {
        guard let counts = activity?.snapshot else { return (0, 0) }
        return (counts.retries, counts.throttled)
    }

    /// `migration 2, operation 1/3 (rename-property, events): writing · 45% · 9000/20000 read ·
    /// 8800 changed · 10085/s · ETA 0:02`.
    static func text(_ p: MigrationProgress, bar: Bool, retries: (retries: Int, throttled: Int)) -> String {
        let what =
            p.undoing
            ? "undo of migration \(p.version), step \(p.operation)/\(p.operations)"
            : "migration \(p.version), operation \(p.operation)/\(p.operations)"
        var parts: [String] = []
        if let percent = p.percent {
            let shown = "\(Int(percent.rounded(.down)))%"
            parts.append(bar ? ProgressBar.bar(Int(percent * 10), of: 1000) + " " + shown : shown)
        }
        parts.append(p.total.map { "\(p.read)/\($0) read" } ?? "\(p.read) read")
        parts.append("\(p.changed) changed")
        if p.rate > 0 && p.phase != .paused { parts.append("\(Int(p.rate))/s") }
        if let eta = p.etaSeconds, p.phase != .finished && p.phase != .paused { parts.append("ETA \(ProgressBar.duration(eta))") }
        if retries.retries > 0 || retries.throttled > 0 {
            parts.append(
                "\(retries.retries) retr\(retries.retries == 1 ? "y" : "ies")" + (retries.throttled > 0 ? " (\(retries.throttled) throttled)" : ""))
        }
        return "\(what) (\(p.op), \(p.table)): \(p.phase.rawValue)" + (bar ? " · " : ", ") + parts.joined(separator: bar ? " · " : ", ")
    }
}
