import Foundation

/// An Azure-hosted workload's managed identity (docs/PROTOCOL.md §12): App Service and
/// Functions publish `IDENTITY_ENDPOINT` + `IDENTITY_HEADER`; elsewhere (VMs, AKS pods with
/// pod identity) the instance metadata service answers at 169.254.169.254, whose host
/// `AZURE_POD_IDENTITY_AUTHORITY_HOST` overrides. `AZURE_CLIENT_ID` picks a user-assigned
/// identity.
public struct ManagedIdentityCredential: TokenCredential, CustomStringConvertible, CustomReflectable {
    public enum Source: Sendable {
        /// App Service's local endpoint and the secret header it checks.
        case appService(endpoint: String, header: String)
        /// The instance metadata service at this origin (`http://169.254.169.254`).
        case instanceMetadata(origin: String)
    }

    public var name: String {
        switch source {
        case .appService: "managed identity (IDENTITY_ENDPOINT)"
        case .instanceMetadata: "managed identity (instance metadata service)"
        }
    }

    let source: Source
    let clientID: String?
    let transport: any HTTPTransport
    let now: @Sendable () -> Date

    public static let instanceMetadataOrigin = "http://169.254.169.254"

    public init(
        source: Source, clientID: String? = nil, transport: any HTTPTransport = CurlTransport(), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.source = source
        self.clientID = clientID
        self.transport = transport
        self.now = now
    }

    /// Never shows IDENTITY_HEADER.
    public var description: String { "ManagedIdentityCredential(\(name))" }
    public var customMirror: Mirror { Mirror(self, children: ["name": name]) }

    public func token(scope: String) async throws -> AccessToken {
        let resource = StorageScope.resource(of: scope)
        var request: TransportRequest
        let url: String
        switch source {
        case .appService(let endpoint, let header):
            url = endpoint
            guard let made = TransportRequest(method: "GET", url: endpoint) else {
                throw AzureStorageError.credential(name, "IDENTITY_ENDPOINT is not a URL")
            }
            request = made
            request.query += [("api-version", "2019-08-01"), ("resource", resource)]
            request.headers["X-IDENTITY-HEADER"] = header
        case .instanceMetadata(let origin):
            // The metadata service is not there off Azure: a short connect says so at once,
            // where the request's own connect timeout would wait 10 s.
            if let unreachable = try await CurlTransport.probe(origin: origin, timeout: 1) {
                throw CredentialUnavailable("managed identity: no instance metadata service at \(origin) (\(unreachable))")
            }
            request = TransportRequest(
                method: "GET", origin: origin, path: "/metadata/identity/oauth2/token",
                query: [("api-version", "2018-02-01"), ("resource", resource)])
            url = origin + request.path
        }
        if let clientID { request.query.append(("client_id", clientID)) }
        request.headers["Metadata"] = "true"
        let response: TransportResponse
        do { response = try await transport.send(request) } catch is CancellationError { throw CancellationError() } catch {
            throw AzureStorageError.credential(name, url: url, "cannot reach the managed identity endpoint: \(RequestPipeline.describe(error))")
        }
        // Something answers at the metadata address but gives no identity here (a VM with
        // none assigned, another cloud's metadata service): unavailable, as azure-identity
        // treats it, so the chain goes on to the Azure CLI.
        if case .instanceMetadata = source,
            [400, 404].contains(response.status) || (response.status == 200 && (try? JSONParser.parse(response.body))?["access_token"] == nil)
        {
            throw CredentialUnavailable(
                "managed identity: the instance metadata service at \(url) has no identity for this machine (HTTP \(response.status))")
        }
        return try TokenEndpoint.read(response, credential: name, url: url, now: now())
    }
}
