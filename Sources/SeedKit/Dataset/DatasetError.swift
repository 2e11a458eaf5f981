import AzureStorage

/// A problem with a dataset's files, located by file and line.
public struct DatasetError: Error, CustomStringConvertible, Sendable, PersonFacingError {
    public var file: String
    public var line: Int?
    public var message: String

    public init(file: String, line: Int?, _ message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}
