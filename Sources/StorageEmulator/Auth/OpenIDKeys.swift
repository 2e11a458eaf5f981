import CryptoExtras
import Foundation
import StorageProtocol

/// The signing keys an authority publishes, per tenant, as Microsoft Entra ID does
/// (docs/PROTOCOL.md §12): `{authority}/{tenant}/v2.0/.well-known/openid-configuration`
/// names the issuer and `jwks_uri`, whose RSA keys (`kty` RSA, `n`, `e`) are known by `kid`.
/// Read on first use, again when a token names a key not seen yet (keys rotate; at most once
/// a minute), and again after a day, so a key the authority withdrew stops being trusted.
///
/// The authority is a far end the emulator does not control (docs/SECURITY.md, "the identity
/// authority"): one read per tenant is in flight at a time — every token waiting on it shares
/// its result, however many unknown key ids they name — a failed read is not tried again for
/// ``retryAfterFailure``, and each document is bounded in bytes and time (``limits``).
actor OpenIDKeys {
    struct TenantKeys {
        var issuer: String?
        var keys: [String: _RSA.Signing.PublicKey]
        var readAt: Date
    }

    let authority: URL
    let transport: CurlTransport
    private var tenants: [String: TenantKeys] = [:]
    /// The read in flight per tenant, which later callers join instead of starting another.
    private var reading: [String: Task<TenantKeys, any Error>] = [:]
    /// When a tenant's last read failed, and why.
    private var failed: [String: (at: Date, error: Unreadable)] = [:]

    /// Each document at most 1 MiB (Entra's key set is a few KiB), read within 10 s, never slower
    /// than 1 KiB/s for 5 s; the authority is the operator's choice, so loopback is allowed.
    static let limits = TransferLimits(maxBodyBytes: 1 << 20, deadline: 10, minimumBytesPerSecond: 1024, slowWindow: 5, publicAddressesOnly: false)
    static let retryAfterFailure: TimeInterval = 10

    init(authority: URL, transport: CurlTransport) {
        self.authority = authority
        self.transport = transport
    }

    /// Why keys could not be read; the verifier answers 401 with it as the detail.
    struct Unreadable: Error { let detail: String }

    /// The tenant's key `kid` (nil when the authority does not publish it) and its issuer.
    func key(tenant: String, kid: String, now: Date) async throws(Unreadable) -> (key: _RSA.Signing.PublicKey?, issuer: String?) {
        if let known = tenants[tenant], now.timeIntervalSince(known.readAt) < 86_400, let key = known.keys[kid] { return (key, known.issuer) }
        if let known = tenants[tenant], now.timeIntervalSince(known.readAt) < 60 { return (nil, known.issuer) }
        if let failure = failed[tenant], now.timeIntervalSince(failure.at) < Self.retryAfterFailure { throw failure.error }
        let task: Task<TenantKeys, any Error>
        if let inFlight = reading[tenant] {
            task = inFlight
        } else {
            task = Task { try await self.read(tenant: tenant, now: now) }
            reading[tenant] = task
        }
        do {
            let fresh = try await task.value
            if reading[tenant] == task {
                reading[tenant] = nil
                tenants[tenant] = fresh
                failed[tenant] = nil
            }
            return (fresh.keys[kid], fresh.issuer)
        } catch {
            let unreadable = error as? Unreadable ?? Unreadable(detail: "The signing keys could not be read.")
            if reading[tenant] == task {
                reading[tenant] = nil
                failed[tenant] = (now, unreadable)
            }
            throw unreadable
        }
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
                let key = try? _RSA.Signing.PublicKey(n: n, e: e)
            else { continue }
            keys[kid] = key
        }
        return TenantKeys(issuer: issuer, keys: keys, readAt: now)
    }

    private func json(_ url: String) async throws(Unreadable) -> JSONValue {
        guard let request = TransportRequest(method: "GET", url: url, headers: HeaderFields([("Accept", "application/json")])) else {
            throw Unreadable(detail: "\(url) is not a URL.")
        }
        let response: TransportResponse
        do { response = try await transport.send(request, limits: Self.limits) } catch {
            throw Unreadable(detail: "The signing keys could not be read from \(url): \(error).")
        }
        guard response.body.count < Self.limits.maxBodyBytes else {
            throw Unreadable(detail: "The document at \(url) is larger than \(Self.limits.maxBodyBytes >> 20) MiB.")
        }
        guard response.status == 200, let value = try? JSONParser.parse(response.body) else {
            throw Unreadable(detail: "The signing keys could not be read from \(url): HTTP \(response.status).")
        }
        return value
    }
}
