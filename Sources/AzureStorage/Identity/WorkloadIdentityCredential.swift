import Foundation

/// A federated workload identity (Kubernetes, GitHub Actions): the token in
/// `AZURE_FEDERATED_TOKEN_FILE` is the client's assertion. The file is read again for every
/// token, since the platform rotates it.
public struct WorkloadIdentityCredential: TokenCredential {
    public let name = "workload identity"
    let endpoint: TokenEndpoint
    let clientID: String
    let tokenFile: String
    let now: @Sendable () -> Date

    public init(
        tenantID: String, clientID: String, tokenFile: String, authority: URL,
        transport: any HTTPTransport = CurlTransport(), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        endpoint = TokenEndpoint(authority: authority, tenant: tenantID, transport: transport)
        self.clientID = clientID
        self.tokenFile = tokenFile
        self.now = now
    }

    public func token(scope: String) async throws -> AccessToken {
        let path = tokenFile
        // A file read blocks: it runs on BlockingPool's threads, not the cooperative pool.
        let assertion: String
        do {
            assertion = try await BlockingPool.run { try String(contentsOfFile: path, encoding: .utf8) }
        } catch {
            throw AzureStorageError.credential(
                name, "AZURE_FEDERATED_TOKEN_FILE \(path) cannot be read; check that the projected token is mounted there")
        }
        return try await endpoint.token(
            clientID: clientID, scope: scope,
            proof: [
                ("client_assertion_type", ClientCertificateCredential.assertionType), ("client_assertion", assertion),
            ], credential: name, now: now())
    }
}
