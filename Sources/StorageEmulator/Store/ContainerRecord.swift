import GRDB
import StorageProtocol

/// A container as stored.
struct ContainerRecord: Sendable {
    var name: String
    /// `container`, `blob`, or empty for private.
    var access: String
    var created: EdmDateTime
    var modified: EdmDateTime
    var etag: String
    var metadata: [(String, String)]
    /// The Set ACL body's signed identifiers, kept as sent.
    var acl: String
    /// The encryption scope its blobs are written with unless a write names one
    /// (`x-ms-default-encryption-scope`); nil: the account's key.
    var defaultEncryptionScope: String?
    /// Whether a write may name another scope (`x-ms-deny-encryption-scope-override`).
    var denyEncryptionScopeOverride: Bool
    /// A soft-deleted container: the name it had, its version, when it was deleted.
    var deleted: (name: String, version: String, at: EdmDateTime, until: EdmDateTime)?

    init(row: Row) {
        name = row["name"]
        access = row["access"]
        created = EdmDateTime(ticks: row["created"])
        modified = EdmDateTime(ticks: row["modified"])
        etag = row["etag"]
        metadata = MetadataCoding.decode(row["metadata"])
        acl = row["acl"]
        defaultEncryptionScope = row.hasColumn("defaultEncryptionScope") ? row["defaultEncryptionScope"] : nil
        denyEncryptionScopeOverride = row.hasColumn("denyEncryptionScopeOverride") ? (row["denyEncryptionScopeOverride"] as Int? ?? 0) == 1 : false
        if row.hasColumn("deletedAt"), let at: Int64 = row["deletedAt"], let name: String = row["deletedName"],
            let version: String = row["deletedVersion"], let until: Int64 = row["deletedUntil"]
        {
            deleted = (name, version, EdmDateTime(ticks: at), EdmDateTime(ticks: until))
        }
    }
}
