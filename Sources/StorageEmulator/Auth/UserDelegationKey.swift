import Foundation
import StorageProtocol

/// A user delegation key (Get User Delegation Key, docs/PROTOCOL.md §11): what a Microsoft
/// Entra principal signs user delegation SAS with instead of the account key.
///
/// The emulator keeps no keys: a key's value is an HMAC, under the account key, of every
/// field the key is issued with. A SAS names those fields (`skoid`, `sktid`, `skt`, `ske`,
/// `sks`, `skv`, `skdutid`), so verifying it recomputes the value — nobody without the
/// account key can make a value the emulator accepts, and a key cannot be stretched (a
/// changed expiry is another value).
struct UserDelegationKey: Sendable, Equatable {
    var objectID: String
    var tenantID: String
    var start: String
    var expiry: String
    var service: String
    var version: String
    /// `DelegatedUserTid` of the request (2026-04-06): the tenant of the user a SAS may be
    /// delegated to. Empty when not asked for.
    var delegatedTenant = ""

    /// The longest a key may last, from now: seven days, as Azure states.
    static let longestLife: TimeInterval = 7 * 24 * 3600

    /// The key's value, base64, as Get User Delegation Key answers it.
    func value(_ signer: SharedKeySigner) -> String {
        signer.signature(
            ["azseed user delegation key", objectID, tenantID, start, expiry, service, version, delegatedTenant].joined(separator: "\n"))
    }

    /// The signer of SAS made with this key.
    func sasSigner(_ accountSigner: SharedKeySigner) -> SharedKeySigner {
        SharedKeySigner(account: accountSigner.account, key: AccountKey(base64: value(accountSigner))!)
    }

    /// Answers Get User Delegation Key (`POST /?restype=service&comp=userdelegationkey`) for a
    /// verified token's principal: `<KeyInfo>` with `Start` (optional), `Expiry` (at most seven
    /// days from now) and `DelegatedUserTid` (optional).
    static func answer(_ request: TransportRequest, principal: TokenPrincipal, signer: SharedKeySigner, now: Date) throws -> TransportResponse {
        guard let tree = XMLTree.parse(request.body), tree.name == "KeyInfo" else { throw XMLBody.invalid }
        func time(_ name: String) throws -> EdmDateTime? {
            guard let text = tree[name]?.text else { return nil }
            guard let value = EdmDateTime(iso8601: text) else {
                throw ServiceError(
                    400, .invalidXmlNodeValue, "The value for one of the XML nodes is not in the correct format: \(name) is not an ISO 8601 UTC time."
                )
            }
            return value
        }
        let current = EdmDateTime(unixSeconds: Int64(now.timeIntervalSince1970))
        guard let expiry = try time("Expiry") else {
            throw ServiceError(400, .invalidXmlNodeValue, "The value for one of the XML nodes is not in the correct format: Expiry is required.")
        }
        let start = try time("Start") ?? current
        let latest = EdmDateTime(unixSeconds: Int64(now.timeIntervalSince1970 + longestLife))
        guard start < expiry, current < expiry, !(latest < expiry) else {
            throw ServiceError(
                400, .invalidXmlNodeValue,
                "The value for one of the XML nodes is not in the correct format: Expiry must be after Start and now, and within seven days of now.")
        }
        let delegated = tree["DelegatedUserTid"]?.text ?? ""
        guard delegated.isEmpty || BearerAuthenticator.isTenantName(delegated) else {
            throw ServiceError(400, .invalidXmlNodeValue, "The value for one of the XML nodes is not in the correct format: DelegatedUserTid.")
        }
        let key = UserDelegationKey(
            objectID: principal.objectID, tenantID: principal.tenantID, start: start.shortISO8601, expiry: expiry.shortISO8601,
            service: "b", version: request.headers["x-ms-version"] ?? "2025-11-05", delegatedTenant: delegated)
        var fields = [
            XMLTree(name: "SignedOid", text: key.objectID), XMLTree(name: "SignedTid", text: key.tenantID),
            XMLTree(name: "SignedStart", text: key.start), XMLTree(name: "SignedExpiry", text: key.expiry),
            XMLTree(name: "SignedService", text: key.service), XMLTree(name: "SignedVersion", text: key.version),
        ]
        if !delegated.isEmpty { fields.append(XMLTree(name: "SignedDelegatedUserTid", text: delegated)) }
        fields.append(XMLTree(name: "Value", text: key.value(signer)))
        return TransportResponse(
            status: 200, headers: HeaderFields([("Content-Type", "application/xml")]),
            body: Data(XMLTree(name: "UserDelegationKey", children: fields).document.utf8))
    }
}

/// Who a verified bearer token names: its object id (`oid`) and tenant (`tid`).
struct TokenPrincipal: Sendable, Equatable {
    var objectID: String
    var tenantID: String
}
