import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import Synchronization

/// A use case's events on the terminal: notes on stderr, a progress line while reading and
/// while writing, and the plan handed to `onPlanned` (to print or save it) before the first
/// write.
final class ConsoleObserver: RunObserver {
    private let onPlanned: @Sendable (Plan) async throws -> Void
    private let reading: ProgressBar
    private let writing: ProgressBar
    private let migrating: MigrationProgressLine
    /// The embedded folder as the user named it (or the default), for notes.
    private let shownFolder: String
    /// Said before what a migration did: `migrate rehearse` applies and undoes on an in-memory
    /// copy, and "migration 1 applied" alone read as the target's (a new user's report).
    private let scope: String

    init(
        target: RunTarget, readingLabel: String = "reading the target", writingLabel: String = "applying", progressAsJSON: Bool = false,
        scope: String = "", onPlanned: @escaping @Sendable (Plan) async throws -> Void = { _ in }
    ) {
        self.onPlanned = onPlanned
        self.scope = scope
        reading = ProgressBar(label: readingLabel, activity: target.configuration.activity)
        writing = ProgressBar(label: writingLabel, activity: target.configuration.activity)
        migrating = MigrationProgressLine(json: progressAsJSON, activity: target.configuration.activity)
        shownFolder = target.embeddedDataDirectory?.relativePath ?? ""
        Console.holdNotes()
    }

    func opened(_ session: StorageSession, through: String?) {
        if let through { Console.note("using the embedded storage in \(shownFolder) \(through)") }
        if session.servesHere {
            Console.note(
                "using the embedded storage in \(shownFolder) (no --connection-string or \(ConnectionString.environmentVariable)); 'azseed emulator' serves it"
            )
        }
    }

    func note(_ text: Phrase) { Console.note(text.rendered(.flags)) }
    /// The events a person reads: a migration resumed, a migration finished. Phases,
    /// checkpoints and failures are in the progress lines and the error already.
    func event(_ event: RunEvent) {
        switch event {
        case .migrationStarted(let migration) where migration.resumedAt != nil:
            let at = migration.resumedAt ?? 1
            note(
                migration.undoing
                    ? "resuming the undo of migration \(migration.version) at step \(at)"
                    : "resuming migration \(migration.version) (\(Printable.escaped(migration.description, quotes: false))) at operation \(at)")
        case .migrationProgress(let progress):
            Console.releaseNotes()
            migrating.update(progress)
        case .migrationControlled(let control):
            migrating.paused(control.paused)
        case .migrationFinished(let report):
            note("\(scope)migration \(report.version) \(report.state): \(report.operations.map { "\($0.op) \($0.changes)" }.joined(separator: ", "))")
        default: break
        }
    }
    func reading(_ count: Int) { reading.update(done: count, total: nil) }
    func planned(_ plan: Plan) async throws {
        reading.finish()
        Console.releaseNotes()
        try await onPlanned(plan)
    }
    func applying(_ progress: ExecutionProgress) {
        Console.releaseNotes()
        writing.update(progress)
    }

    /// Clears the progress lines drawn in place.
    func finish() {
        reading.finish()
        writing.finish()
        migrating.finish()
    }
}
