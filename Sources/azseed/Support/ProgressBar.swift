import AzureStorage
import Foundation
import SeedRunner
import Synchronization

/// Progress on stderr as the tools users know draw it: the phase, items (and blob bytes) done of
/// the total, the rate, the time left, and the retries and throttled answers seen so far. On a
/// terminal one line is redrawn in place at most ten times a second; otherwise (CI logs, a pipe)
/// a line is printed every five seconds. Lines go through ``LineWriter``'s thread, so a slow
/// terminal never holds a thread of the pool.
final class ProgressBar: Sendable {
    private let label: String
    private let terminal: Bool
    private let activity: RequestActivity?
    private let started = Date()
    private let lastDraw = Mutex<Double>(0)
    private let drewInPlace = Mutex(false)
    /// Seconds between lines when stderr is not a terminal.
    static let plainInterval = 5.0

    init(label: String, activity: RequestActivity? = nil) {
        self.label = label
        terminal = Console.stderrIsTerminal && !Console.requestLinesOnStderr.load(ordering: .relaxed)
        self.activity = activity
    }

    func update(_ progress: ExecutionProgress) {
        Interruption.record(done: progress.done, total: progress.total, writing: true)
        guard shouldDraw(final: progress.done == progress.total) else { return }
        var parts: [String] = []
        let name = progress.phase.map { "\(label) \($0)" } ?? label
        if progress.total > 0 {
            parts.append(
                terminal ? Self.bar(progress.done, of: progress.total) + " \(progress.done)/\(progress.total)" : "\(progress.done)/\(progress.total)")
        }
        if progress.bytesTotal > 0 { parts.append("\(Self.bytes(progress.bytesDone))/\(Self.bytes(progress.bytesTotal))") }
        let rate = progress.seconds > 0 ? Double(progress.done) / progress.seconds : 0
        if rate > 0 {
            parts.append("\(Int(rate))/s")
            // Not in the first second: a rate from a few batches put the end hours away.
            if progress.done < progress.total, progress.seconds >= 1 {
                parts.append("ETA \(Self.duration(Double(progress.total - progress.done) / rate))")
            }
        }
        parts += retries()
        draw(name, parts)
    }

    /// A count without a known total (entities read while planning).
    func update(done: Int, total: Int?) {
        Interruption.record(done: done, total: total, writing: false)
        guard shouldDraw(final: done == total) else { return }
        let seconds = Date().timeIntervalSince(started)
        var parts = [total.map { "\(done)/\($0)" } ?? "\(done)"]
        if seconds > 0, done > 0 { parts.append("\(Int(Double(done) / seconds))/s") }
        parts += retries()
        draw(label, parts)
    }

    /// Clears the line drawn in place.
    func finish() {
        guard terminal, drewInPlace.withLock({ $0 }) else { return }
        LineWriter.shared.write(Array("\r\u{1B}[2K".utf8), to: STDERR_FILENO)
    }

    private func retries() -> [String] {
        guard let counts = activity?.snapshot, counts.retries > 0 || counts.throttled > 0 else { return [] }
        return ["\(counts.retries) retr\(counts.retries == 1 ? "y" : "ies")" + (counts.throttled > 0 ? " (\(counts.throttled) throttled)" : "")]
    }

    private func shouldDraw(final: Bool) -> Bool {
        let now = Date().timeIntervalSinceReferenceDate
        let interval = terminal ? 0.1 : Self.plainInterval
        return lastDraw.withLock { last in
            if last == 0 && !terminal {
                last = now
                return false
            }  // the first plain line after the interval
            guard now - last >= interval || (final && terminal) else { return false }
            last = now
            return true
        }
    }

    private func draw(_ name: String, _ parts: [String]) {
        let text = ([name] + parts).joined(separator: terminal ? " · " : ", ")
        if terminal {
            drewInPlace.withLock { $0 = true }
            LineWriter.shared.write(Array("\r\u{1B}[2K\(text)".utf8), to: STDERR_FILENO)
        } else {
            LineWriter.shared.write(Array("azseed: \(text)\n".utf8), to: STDERR_FILENO)
        }
    }

    static func bar(_ done: Int, of total: Int) -> String {
        let width = 24
        let filled = min(width, done * width / max(total, 1))
        return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]"
    }

    /// 42.4 KB, 1.3 MB: decimal units, as AzCopy reports them.
    static func bytes(_ n: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(n)
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(n) B" : "\(String(format: "%.1f", value)) \(units[unit])"
    }

    /// 0:31, 12:05, 1:02:03.
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }
}
