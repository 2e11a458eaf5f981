import Foundation
import StorageProtocol

/// A stored access policy (docs/PROTOCOL.md §11): a `SignedIdentifier` of a container's or
/// table's ACL that a service SAS names with `si`. Together the SAS and the policy give the
/// start, expiry and permissions; a field given by both is refused (400), one given by
/// neither fails authentication. Deleting the policy revokes the SAS.
struct StoredPolicy: Equatable {
    var start: String
    var expiry: String
    var permissions: String

    /// The policy `id` in an ACL document (`<SignedIdentifiers>` as stored), if any.
    static func find(_ id: String, in acl: String) -> StoredPolicy? {
        guard !acl.isEmpty, let tree = XMLTree.parse(Data(acl.utf8)) else { return nil }
        for identifier in tree.children where identifier.name == "SignedIdentifier" {
            guard identifier.children.first(where: { $0.name == "Id" })?.text.isExactly(id) == true else { continue }
            let policy = identifier.children.first { $0.name == "AccessPolicy" }
            func value(_ name: String) -> String { policy?.children.first { $0.name == name }?.text ?? "" }
            return StoredPolicy(start: value("Start"), expiry: value("Expiry"), permissions: value("Permission"))
        }
        return nil
    }

    /// The grant with the policy's fields merged in and its time window checked.
    static func resolve(_ grant: SASGrant, acl: String, now: Date) throws(ServiceError) -> SASGrant {
        guard let id = grant.policy else { return grant }
        guard let policy = find(id, in: acl) else {
            throw SharedAccessSignature.failed(
                "The stored access policy '\(id)' the SAS names (si) does not exist on this resource; it was deleted or never set.")
        }
        func merged(_ sas: String, _ stored: String, _ name: String) throws(ServiceError) -> String {
            if !sas.isEmpty && !stored.isEmpty {
                throw ServiceError(
                    400, .invalidQueryParameterValue,
                    "The SAS field '\(name)' is also set by the stored access policy '\(id)'; give it in one place only.")
            }
            return sas.isEmpty ? stored : sas
        }
        var resolved = grant
        resolved.permissions = try merged(grant.permissions, policy.permissions, "sp")
        resolved.start = try merged(grant.start, policy.start, "st")
        resolved.expiry = try merged(grant.expiry, policy.expiry, "se")
        guard !resolved.permissions.isEmpty, !resolved.expiry.isEmpty else {
            throw SharedAccessSignature.failed(
                "Signature fields not well formed: neither the SAS nor the stored access policy '\(id)' gives sp and se.")
        }
        try SharedAccessSignature.checkTime(start: resolved.start, expiry: resolved.expiry, now: now)
        resolved.policy = nil
        return resolved
    }
}
