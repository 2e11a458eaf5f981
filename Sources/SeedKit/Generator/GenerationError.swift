import AzureStorage

/// A problem found while turning a dataset into a desired state.
public struct GenerationError: Error, CustomStringConvertible, Sendable, PersonFacingError {
    /// Whether the user's flags caused it (exit 64) rather than the dataset's files (exit 1).
    public var isUsage: Bool
    public var message: Phrase

    public init(usage: Bool = false, _ message: Phrase) {
        self.isUsage = usage
        self.message = message
    }

    public var phrase: Phrase { message }
}
