import SeedKit

/// A moment in a run's life, as a value: what a library user acts on the way Flyway's
/// callbacks allow (before and after each migration, on a failure), and what the console
/// renders. ``RunObserver/event(_:)`` receives them in order, from the task that runs the work.
public enum RunEvent: Sendable {
    /// A phase of a seeding run begins (``RunPhase``).
    case phaseBegan(RunPhase)
    /// A phase of a seeding run ended without an error.
    case phaseEnded(RunPhase)
    /// A migration (or its undo) starts, or resumes at its checkpoint.
    case migrationStarted(MigrationEvent)
    /// One of its operations (an undo's steps) finished and was recorded as the checkpoint: a
    /// run stopped after this resumes at the next one. `operation` counts from 1.
    case migrationCheckpointed(MigrationEvent, operation: Int, changes: Int)
    /// It stopped on what running again would meet again (an entity it cannot change, a write
    /// the service refuses); the ledger records why.
    case migrationFailed(MigrationEvent, reason: String)
    /// It finished: applied (or, in shards, this shard's part), or undone.
    case migrationFinished(MigrationReport)
    /// How far one of its operations got (``MigrationProgress``): heard as entities are read
    /// and written, from the tasks doing it, often — an observer that prints throttles.
    case migrationProgress(MigrationProgress)
    /// `migrate control` asked the run something new (a pause, a resume, a rate), heard when
    /// the run read it (``MigrationControl``); a cancel ends the run with its error.
    case migrationControlled(MigrationControl)
}

/// The phases of a run that plans and then writes: `planning` for `plan`, `apply`, `verify` and
/// `reset` (``Seeder``), `applying` for those and for `import` and `copy`.
public enum RunPhase: String, Sendable, Equatable {
    /// Reading the target and planning: nothing is written.
    case planning
    /// Carrying out the plan.
    case applying
}

/// Which migration an event is about.
public struct MigrationEvent: Sendable, Equatable {
    public var version: String
    public var description: String
    /// The run puts the migration back (`migrate undo`) rather than applying it.
    public var undoing: Bool
    /// The operation (an undo's step), from 1, a resumed run starts at; nil for a fresh start.
    public var resumedAt: Int?

    public init(version: String, description: String, undoing: Bool, resumedAt: Int?) {
        self.version = version
        self.description = description
        self.undoing = undoing
        self.resumedAt = resumedAt
    }
}

/// An observer that hands every event to a closure and hears nothing else: the callback a
/// program registers (`Migrator(…, observer: RunEventHandler { event in … })`).
public struct RunEventHandler: RunObserver {
    let handle: @Sendable (RunEvent) -> Void

    public init(_ handle: @escaping @Sendable (RunEvent) -> Void) { self.handle = handle }

    public func event(_ event: RunEvent) { handle(event) }
}
