import Foundation

/// A bearer token for Azure Storage and when it stops working. Its description never shows
/// the token.
public struct AccessToken: Sendable, CustomStringConvertible {
    public let token: String
    public let expiresOn: Date
    /// When to get a new one before it expires (managed identity's long-lived tokens are
    /// refreshed half-way); nil means five minutes before ``expiresOn``.
    public let refreshOn: Date?

    public init(token: String, expiresOn: Date, refreshOn: Date? = nil) {
        self.token = token
        self.expiresOn = expiresOn
        self.refreshOn = refreshOn
    }

    /// When a cache should get a new token.
    public var refreshAt: Date { refreshOn ?? expiresOn.addingTimeInterval(-AccessToken.refreshWindow) }

    /// Tokens are refreshed this long before they expire (azure-core's default).
    public static let refreshWindow: TimeInterval = 300

    public var description: String { "AccessToken(token redacted, expires \(ISO8601DateFormatter().string(from: expiresOn)))" }
}
