import AzureStorage
import CryptoExtras
import Foundation

/// The signing keys an authority publishes, per tenant, as Microsoft Entra ID does
/// (docs/PROTOCOL.md §12): `{authority}/{tenant}/v2.0/.well-known/openid-configuration`
/// names the issuer and `jwks_uri`, whose RSA keys (`kty` RSA, `n`, `e`) are known by `kid`.
/// Read on first use, again when a token names a key not seen yet (keys rotate; at most once
/// a minute), and again after a day, so a key the authority withdrew stops being trusted.
actor OpenIDKeys {
    struct TenantKeys {
        var issuer: String?
        var keys: [String: _RSA.Signing.PublicKey]
        var readAt: Date
    }

    let authority: URL
    let transport: any HTTPTransport
    private var tenants: [String: TenantKeys] = [:]

    init(authority: URL, transport: any HTTPTransport) {
        self.authority = authority
        self.transport = transport
    }

    /// Why keys could not be read; the verifier answers 401 with it as the detail.
    struct Unreadable: Error { let detail: String }

    /// The tenant's key `kid` (nil when the authority does not publish it) and its issuer.
    func key(tenant: String, kid: String, now: Date) async throws(Unreadable) -> (key: _RSA.Signing.PublicKey?, issuer: String?) {
        if let known = tenants[tenant], now.timeIntervalSince(known.readAt) < 86_400, let key = known.keys[kid] { return (key, known.issuer) }
        if let known = tenants[tenant], now.timeIntervalSince(known.readAt) < 60 { return (nil, known.issuer) }
        let fresh = try await read(tenant: tenant, now: now)
        tenants[tenant] = fresh
        return (fresh.keys[kid], fresh.issuer)
    }

    private func read(tenant: String, now: Date) async throws(Unreadable) -> TenantKeys {
        let metadataURL = "\(authority.absoluteString)/\(tenant)/v2.0/.well-known/openid-configuration"
        let metadata = try await json(metadataURL)
        guard let jwksURL = metadata["jwks_uri"]?.stringValue else {
            throw Unreadable(detail: "The OpenID configuration at \(metadataURL) names no jwks_uri.")
        }
        let issuer = metadata["issuer"]?.stringValue?.replacingOccurrences(of: "{tenantid}", with: tenant)
        guard case .array(let entries)? = try await json(jwksURL)["keys"] else {
            throw Unreadable(detail: "The key set at \(jwksURL) holds no keys.")
        }
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for entry in entries {
            guard entry["kty"]?.stringValue == "RSA", let kid = entry["kid"]?.stringValue,
                  let n = entry["n"]?.stringValue.flatMap(Base64URL.decode), let e = entry["e"]?.stringValue.flatMap(Base64URL.decode),
                  let key = try? _RSA.Signing.PublicKey(n: n, e: e) else { continue }
            keys[kid] = key
        }
        return TenantKeys(issuer: issuer, keys: keys, readAt: now)
    }

    private func json(_ url: String) async throws(Unreadable) -> JSONValue {
        guard let request = TransportRequest(method: "GET", url: url, headers: HeaderFields([("Accept", "application/json")])) else {
            throw Unreadable(detail: "\(url) is not a URL.")
        }
        let response: TransportResponse
        do { response = try await transport.send(request) } catch {
            throw Unreadable(detail: "The signing keys could not be read from \(url): \(error).")
        }
        guard response.status == 200, let value = try? JSONParser.parse(response.body) else {
            throw Unreadable(detail: "The signing keys could not be read from \(url): HTTP \(response.status).")
        }
        return value
    }
}
