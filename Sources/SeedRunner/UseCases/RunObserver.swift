import AzureStorage
import SeedKit

/// What a use case tells its caller while it runs: notes for a person, how far reading and
/// writing got, and the plan before anything is written. The CLI prints them; a program may
/// ignore them (every method has a default that does nothing).
public protocol RunObserver: Sendable {
    /// The target is open; `through` says how an embedded folder was reached when another
    /// process serves it (``StorageSession/servedBy``).
    func opened(_ session: StorageSession, through: String?)
    /// One line about the run (where the reference time came from, the dataset's inputs).
    func note(_ text: Phrase)
    /// Entities read from the target so far.
    func reading(_ count: Int)
    /// The plan, made and checked, before its first write (to print or save it).
    func planned(_ plan: Plan) async throws
    /// How far carrying out the plan got.
    func applying(_ progress: ExecutionProgress)
    /// A moment in the run's life (``RunEvent``): a phase begins or ends, a migration starts,
    /// records a checkpoint, fails or finishes.
    func event(_ event: RunEvent)
}

extension RunObserver {
    public func opened(_ session: StorageSession, through: String?) {}
    public func note(_ text: Phrase) {}
    public func reading(_ count: Int) {}
    public func planned(_ plan: Plan) async throws {}
    public func applying(_ progress: ExecutionProgress) {}
    public func event(_ event: RunEvent) {}
}

/// An observer that hears nothing.
public struct SilentObserver: RunObserver {
    public init() {}
}
