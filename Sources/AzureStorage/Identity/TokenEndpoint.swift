import Foundation

/// Microsoft Entra ID's token endpoint for the client-credentials grant, shared by the
/// secret, certificate and workload-identity credentials (docs/PROTOCOL.md §12):
/// `POST {authority}/{tenant}/oauth2/v2.0/token` with a form body, answered by JSON with
/// `access_token` and `expires_in`.
struct TokenEndpoint: Sendable {
    let authority: URL
    let tenant: String
    let transport: any HTTPTransport

    /// The authority host: `AZURE_AUTHORITY_HOST` (a bare host means https), else the public
    /// cloud's. Plain HTTP is refused: the request carries a secret or an assertion.
    static func authority(_ environment: [String: String]) throws -> URL {
        var text = environment["AZURE_AUTHORITY_HOST"].flatMap { $0.isEmpty ? nil : $0 } ?? "https://login.microsoftonline.com"
        if !text.contains("://") { text = "https://" + text }
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text), url.scheme?.lowercased() == "https", url.host != nil else {
            throw AzureStorageError.credential(
                "environment", "AZURE_AUTHORITY_HOST '\(SecretRedaction.redact(text))' is not an https URL; an authority is only reached over HTTPS")
        }
        return url
    }

    var url: String { "\(authority.absoluteString)/\(PercentEncoding.component(tenant))/oauth2/v2.0/token" }

    /// Asks for a token for `scope`, proving the client with `proof` (`client_secret`, or the
    /// jwt-bearer `client_assertion`).
    func token(clientID: String, scope: String, proof: [(String, String)], credential: String, now: Date) async throws -> AccessToken {
        let form = ([("client_id", clientID), ("grant_type", "client_credentials"), ("scope", scope)] + proof)
            .map { "\(PercentEncoding.component($0.0))=\(PercentEncoding.component($0.1))" }.joined(separator: "&")
        guard
            let request = TransportRequest(
                method: "POST", url: url,
                headers: HeaderFields([("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")]),
                body: Data(form.utf8))
        else {
            throw AzureStorageError.credential(credential, "the token endpoint \(url) is not a URL; check AZURE_TENANT_ID and AZURE_AUTHORITY_HOST")
        }
        let response: TransportResponse
        do { response = try await transport.send(request) } catch is CancellationError { throw CancellationError() } catch {
            throw AzureStorageError.credential(credential, url: url, "cannot reach the token endpoint: \(RequestPipeline.describe(error))")
        }
        return try Self.read(response, credential: credential, url: url, now: now)
    }

    /// Reads a token answer: `access_token` with `expires_in` (seconds from now) or
    /// `expires_on` (epoch seconds, as managed identity answers); an error answer's
    /// `error_description` (or `error`, or `message`) becomes the message.
    static func read(_ response: TransportResponse, credential: String, url: String, now: Date) throws -> AccessToken {
        let json = try? JSONParser.parse(response.body)
        guard response.status == 200 else {
            let reason =
                json?["error_description"]?.stringValue ?? json?["error"]?.stringValue ?? json?["message"]?.stringValue
                ?? HTTPStatus.reason(response.status)
            let firstLine = reason.split(whereSeparator: \.isNewline).first.map(String.init) ?? reason
            throw AzureStorageError.credential(credential, url: url, status: response.status, firstLine)
        }
        guard let json, let token = json["access_token"]?.stringValue, !token.isEmpty else {
            throw AzureStorageError.credential(credential, url: url, "the answer holds no access_token")
        }
        func seconds(_ name: String) -> Double? {
            switch json[name] {
            case .number(let text)?, .string(let text)?: Double(text)
            default: nil
            }
        }
        let expires: Date
        if let inSeconds = seconds("expires_in") {
            expires = now.addingTimeInterval(inSeconds)
        } else if let on = seconds("expires_on") {
            expires = Date(timeIntervalSince1970: on)
        } else {
            throw AzureStorageError.credential(credential, url: url, "the answer says neither expires_in nor expires_on")
        }
        let refreshIn = seconds("refresh_in")
        // Long-lived tokens (managed identity's, ≥ 2 h) are refreshed half-way, as azure-identity does.
        let lifetime = expires.timeIntervalSince(now)
        let refresh = refreshIn.map { now.addingTimeInterval($0) } ?? (lifetime >= 7200 ? now.addingTimeInterval(lifetime / 2) : nil)
        return AccessToken(token: token, expiresOn: expires, refreshOn: refresh)
    }
}
