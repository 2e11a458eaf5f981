import AzureStorage
import GRDB

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

    init(row: Row) {
        name = row["name"]
        access = row["access"]
        created = EdmDateTime(ticks: row["created"])
        modified = EdmDateTime(ticks: row["modified"])
        etag = row["etag"]
        metadata = MetadataCoding.decode(row["metadata"])
        acl = row["acl"]
    }
}
