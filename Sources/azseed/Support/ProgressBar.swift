import Foundation
import SeedRunner
import Synchronization

/// A one-line progress bar on stderr, drawn only when stderr is a terminal and at most ten
/// times a second.
final class ProgressBar: Sendable {
    private let label: String
    private let enabled: Bool
    private let lastDraw = Mutex<Double>(0)

    init(label: String) {
        self.label = label
        enabled = Console.stderrIsTerminal
    }

    func update(_ progress: ExecutionProgress) {
        update(done: progress.done, total: progress.total)
    }

    func update(done: Int, total: Int?) {
        guard enabled else { return }
        let now = Date().timeIntervalSinceReferenceDate
        let draw = lastDraw.withLock { last in
            guard now - last >= 0.1 || done == total else { return false }
            last = now
            return true
        }
        guard draw else { return }
        var line = "\r\u{1B}[2K\(label) "
        if let total, total > 0 {
            let width = 30
            let filled = min(width, done * width / total)
            line += "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] \(done)/\(total)"
        } else {
            line += "\(done)"
        }
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Clears the bar's line.
    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}
