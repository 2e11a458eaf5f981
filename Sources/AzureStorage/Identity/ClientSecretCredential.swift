import Foundation

/// A service principal proving itself with a client secret (`AZURE_CLIENT_SECRET`).
public struct ClientSecretCredential: TokenCredential, CustomStringConvertible, CustomReflectable {
    public let name = "environment (client secret)"
    let endpoint: TokenEndpoint
    let clientID: String
    let secret: String
    let now: @Sendable () -> Date

    /// `authority` is the host (`https://login.microsoftonline.com`), without the tenant.
    public init(
        tenantID: String, clientID: String, secret: String, authority: URL,
        transport: any HTTPTransport = CurlTransport(), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        endpoint = TokenEndpoint(authority: authority, tenant: tenantID, transport: transport)
        self.clientID = clientID
        self.secret = secret
        self.now = now
    }

    /// Never shows the secret.
    public var description: String { "ClientSecretCredential(client \(clientID), secret redacted)" }
    public var customMirror: Mirror { Mirror(self, children: ["clientID": clientID]) }

    public func token(scope: String) async throws -> AccessToken {
        try await endpoint.token(clientID: clientID, scope: scope, proof: [("client_secret", secret)], credential: name, now: now())
    }
}
