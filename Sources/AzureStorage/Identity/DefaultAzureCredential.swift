import Foundation

/// The first credential configured on this machine, in azure-identity's
/// DefaultAzureCredential order (docs/PROTOCOL.md §12):
///
/// 1. environment — `AZURE_TENANT_ID`, `AZURE_CLIENT_ID` and `AZURE_CLIENT_SECRET` or
///    `AZURE_CLIENT_CERTIFICATE_PATH` (authority `AZURE_AUTHORITY_HOST`);
/// 2. workload identity — `AZURE_FEDERATED_TOKEN_FILE` with the tenant and client;
/// 3. managed identity — `IDENTITY_ENDPOINT` + `IDENTITY_HEADER`, else the instance metadata
///    service (host `AZURE_POD_IDENTITY_AUTHORITY_HOST`);
/// 4. Azure CLI — `az` on `PATH`, signed in.
///
/// A credential that is not set up is passed over; one that is set up and fails stops the
/// chain with its own error, as azure-identity's does, so a wrong secret is reported rather
/// than hidden behind the next credential.
public struct DefaultAzureCredential: TokenCredential {
    public var name: String { "DefaultAzureCredential" }
    /// The credentials in the order they are tried.
    public let chain: [any TokenCredential]

    public init(chain: [any TokenCredential]) { self.chain = chain }

    /// The chain the environment configures. Throws a credential error when a variable is
    /// set but unusable (an unreadable certificate file, an http authority).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, transport: any HTTPTransport = CurlTransport()) throws {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        var chain: [any TokenCredential] = []
        let tenant = value("AZURE_TENANT_ID")
        let client = value("AZURE_CLIENT_ID")
        if let tenant, let client, let secret = value("AZURE_CLIENT_SECRET") {
            chain.append(
                ClientSecretCredential(
                    tenantID: tenant, clientID: client, secret: secret,
                    authority: try TokenEndpoint.authority(environment), transport: transport))
        } else if let tenant, let client, let path = value("AZURE_CLIENT_CERTIFICATE_PATH") {
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw AzureStorageError.credential(
                    "environment (client certificate)", "AZURE_CLIENT_CERTIFICATE_PATH \(path) cannot be read as a PEM file")
            }
            chain.append(
                try ClientCertificateCredential(
                    tenantID: tenant, clientID: client, pem: pem,
                    authority: try TokenEndpoint.authority(environment), transport: transport))
        }
        if let tenant, let client, let file = value("AZURE_FEDERATED_TOKEN_FILE") {
            chain.append(
                WorkloadIdentityCredential(
                    tenantID: tenant, clientID: client, tokenFile: file,
                    authority: try TokenEndpoint.authority(environment), transport: transport))
        }
        if let endpoint = value("IDENTITY_ENDPOINT"), let header = value("IDENTITY_HEADER") {
            chain.append(ManagedIdentityCredential(source: .appService(endpoint: endpoint, header: header), clientID: client, transport: transport))
        } else {
            var origin = value("AZURE_POD_IDENTITY_AUTHORITY_HOST") ?? ManagedIdentityCredential.instanceMetadataOrigin
            if !origin.contains("://") { origin = "http://" + origin }
            while origin.hasSuffix("/") { origin.removeLast() }
            chain.append(ManagedIdentityCredential(source: .instanceMetadata(origin: origin), clientID: client, transport: transport))
        }
        if let az = AzureCLICredential.find(in: environment) {
            chain.append(AzureCLICredential(executable: az, environment: environment))
        }
        self.chain = chain
    }

    public func token(scope: String) async throws -> AccessToken {
        var passedOver: [String] = []
        for credential in chain {
            do {
                return try await credential.token(scope: scope)
            } catch let unavailable as CredentialUnavailable {
                passedOver.append(unavailable.description)
            }
        }
        if !chain.contains(where: { $0 is AzureCLICredential }) { passedOver.append("Azure CLI: no 'az' on PATH") }
        throw AzureStorageError(
            kind: .credential, operation: "Get a token (DefaultAzureCredential)", url: "",
            message:
                "no credential is configured (\(passedOver.joined(separator: "; "))); set AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (or AZURE_CLIENT_CERTIFICATE_PATH), run where a managed identity is assigned, or sign in with 'az login'"
        )
    }
}
