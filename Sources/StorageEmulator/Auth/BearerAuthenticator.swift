import CryptoExtras
import Foundation
import StorageProtocol

/// Checks `Authorization: Bearer` tokens as Azure Storage does (docs/PROTOCOL.md §12): an
/// RS256 JWT of the one tenant the emulator was given (`--oauth-tenant`; Entra signs every
/// tenant's tokens with the same keys, and with no role assignments here a token of any
/// tenant would otherwise open the account) whose signature verifies against a key the
/// authority publishes for that tenant, issued by that authority (`{authority}/{tenant}/v2.0`, the v1 form
/// `{authority}/{tenant}/`, the issuer the tenant's OpenID configuration names, or for the
/// public cloud `https://sts.windows.net/{tenant}/`), for Azure Storage (`aud`
/// `https://storage.azure.com[/]`, its application id, or the account's public-cloud
/// endpoint — never an audience taken from the request's `Host`) and valid
/// now (`nbf`, `exp`, five minutes' skew). A refusal is 401 InvalidAuthenticationInfo with a
/// `WWW-Authenticate` challenge naming the authority; a token over plain HTTP is 403.
/// A valid token may do anything an account key may: the emulator has no role assignments.
struct BearerAuthenticator: Sendable {
    let authority: URL
    /// The tenant whose tokens are accepted (compared without regard to case).
    let tenant: String
    let account: String
    let secure: Bool
    let keys: OpenIDKeys
    static let skew: TimeInterval = 300
    /// Azure Storage's application id, an audience tokens may carry instead of its URL.
    static let storageApplicationID = "e406a681-f3d4-42a8-90b6-c2b029497af1"
    /// The oldest `x-ms-version` that accepts bearer tokens.
    static let oldestVersion = "2017-11-09"

    init(authority: URL, tenant: String, account: String, secure: Bool, transport: CurlTransport) {
        self.authority = authority
        self.tenant = tenant.lowercased()
        self.account = account
        self.secure = secure
        keys = OpenIDKeys(authority: authority, transport: transport)
    }

    static func isBearer(_ request: TransportRequest) -> Bool {
        request.headers["Authorization"].map { $0.lowercased().hasPrefix("bearer ") } ?? false
    }

    /// The token's principal once verified (its `oid`, or `sub` without one, and tenant).
    @discardableResult
    func verify(_ request: TransportRequest, service: EmulatorServiceKind, now: Date = Date()) async throws(ServiceError) -> TokenPrincipal {
        guard secure else {
            throw RequestAuthenticator.failed("Authentication scheme Bearer is not allowed with HTTP.")
        }
        if let version = request.headers["x-ms-version"], version < Self.oldestVersion {
            throw ServiceError(
                400, .invalidHeaderValue, "Authentication scheme Bearer is not supported in version \(version); use \(Self.oldestVersion) or later.")
        }
        let text = String(request.headers["Authorization"]!.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        let token: JSONWebToken
        do { token = try JSONWebToken(compact: text) } catch { throw refuse("common", "The token is malformed: \(error.description).") }
        let tenant = token.string("tid") ?? Self.tenant(ofIssuer: token.string("iss") ?? "")
        guard let tenant, Self.isTenantName(tenant) else { throw refuse(self.tenant, "The token names no tenant (tid).") }
        guard tenant.lowercased() == self.tenant else {
            throw refuse(self.tenant, "The token is from tenant \(tenant), not the tenant of this emulator (\(self.tenant)).")
        }
        guard token.header["alg"]?.stringValue == "RS256" else { throw refuse(tenant, "The token's algorithm is not RS256.") }
        guard let kid = token.header["kid"]?.stringValue else { throw refuse(tenant, "The token's header names no signing key (kid).") }
        let found: (key: _RSA.Signing.PublicKey?, issuer: String?)
        do { found = try await keys.key(tenant: tenant, kid: kid, now: now) } catch { throw refuse(tenant, error.detail) }
        guard let key = found.key else {
            throw refuse(tenant, "Signature validation failed: the authority publishes no key '\(kid)' for tenant \(tenant).")
        }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: token.signature)
        guard key.isValidSignature(signature, for: Data(token.signingInput), padding: .insecurePKCS1v1_5) else {
            throw refuse(tenant, "Signature validation failed.")
        }
        let issuer = token.string("iss") ?? ""
        guard acceptedIssuers(tenant: tenant, published: found.issuer).contains(where: { $0.isExactly(issuer) }) else {
            throw refuse(tenant, "Issuer validation failed: '\(issuer)' is not \(authority.absoluteString)/\(tenant)/v2.0.")
        }
        let audiences = acceptedAudiences(service)
        guard token.audiences.contains(where: { given in audiences.contains { $0.isExactly(given) } }) else {
            throw refuse(tenant, "Audience validation failed: the token is not for https://storage.azure.com.")
        }
        guard let expires = token.date("exp") else { throw refuse(tenant, "The token has no expiry (exp).") }
        if expires.addingTimeInterval(Self.skew) <= now { throw refuse(tenant, "Lifetime validation failed. The token is expired.") }
        if let notBefore = token.date("nbf"), notBefore.addingTimeInterval(-Self.skew) > now {
            throw refuse(tenant, "Lifetime validation failed. The token is not yet valid.")
        }
        return TokenPrincipal(objectID: token.string("oid") ?? token.string("sub") ?? "", tenantID: tenant)
    }

    func acceptedIssuers(tenant: String, published: String?) -> [String] {
        let base = authority.absoluteString
        var issuers = ["\(base)/\(tenant)/v2.0", "\(base)/\(tenant)/"]
        if let published { issuers.append(published) }
        if authority.host == "login.microsoftonline.com" { issuers.append("https://sts.windows.net/\(tenant)/") }
        return issuers
    }

    func acceptedAudiences(_ service: EmulatorServiceKind) -> [String] {
        let kind = service == .blob ? "blob" : "table"
        return ["https://storage.azure.com", "https://\(account).\(kind).core.windows.net"].flatMap { [$0, $0 + "/"] } + [Self.storageApplicationID]
    }

    /// 401 InvalidAuthenticationInfo with the challenge a client follows to the authority.
    func refuse(_ tenant: String, _ detail: String) -> ServiceError {
        ServiceError(
            401, .invalidAuthenticationInfo,
            "Server failed to authenticate the request. Please refer to the information in the www-authenticate header.\n\(detail)",
            headers: [
                (
                    "WWW-Authenticate",
                    "Bearer authorization_uri=\(authority.absoluteString)/\(tenant)/oauth2/authorize resource_id=https://storage.azure.com"
                )
            ])
    }

    /// The tenant in an issuer URL: its first path segment.
    static func tenant(ofIssuer issuer: String) -> String? {
        URL(string: issuer)?.path.split(separator: "/").first.map(String.init)
    }

    /// A tenant id or domain: letters, digits, `-` and `.` only (no `.` or `..` segment), so
    /// it can go into a URL.
    static func isTenantName(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 100 && text != "." && text != ".." && !text.hasPrefix(".")
            && text.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
            }
    }
}
