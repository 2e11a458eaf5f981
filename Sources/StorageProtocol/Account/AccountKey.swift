import Foundation

/// A Shared Key: the decoded bytes of a base64 account key. Its description never shows
/// the key, so it cannot leak through logs or error messages.
public struct AccountKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public let bytes: [UInt8]

    /// Decodes a base64 key; nil when the text is not base64.
    public init?(base64: String) {
        guard let data = Data(base64Encoded: base64), !data.isEmpty else { return nil }
        bytes = [UInt8](data)
    }

    public var description: String { "AccountKey(redacted)" }
    public var debugDescription: String { description }
}
