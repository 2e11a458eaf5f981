import AzureStorage

/// A problem with a dataset's files, located by file and line.
public struct DatasetError: Error, CustomStringConvertible, Sendable, PersonFacingError {
    public var file: String
    public var line: Int?
    public var message: Phrase

    public init(file: String, line: Int?, _ message: Phrase) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var phrase: Phrase {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}
