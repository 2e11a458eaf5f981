/// An error already phrased for the person who caused it: what failed, where, and what to do,
/// in one line. Libraries state the facts and name the ``Setting`` to change; the program
/// that shows it spells the setting (``Phrase/rendered(_:)``); `azseed` prints it on stderr
/// and exits 1.
public protocol PersonFacingError: Error, CustomStringConvertible {
    /// The message, its settings not yet spelled.
    var phrase: Phrase { get }
}

extension PersonFacingError {
    /// The message as a library shows it (each setting's plain name).
    public var description: String { phrase.description }
}
