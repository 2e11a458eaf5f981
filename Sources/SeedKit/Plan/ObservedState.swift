import AzureStorage

/// What a target account holds of a dataset's storage, as observed: its containers with
/// their blobs, and its tables with the entities of the dataset's partitions.
public struct ObservedState: Sendable {
    /// Containers by name; a missing name means the container does not exist.
    public var containers: [String: ObservedContainer]
    /// Tables by name; a missing name means the table does not exist.
    public var tables: [String: ObservedTable]

    public init(containers: [String: ObservedContainer] = [:], tables: [String: ObservedTable] = [:]) {
        self.containers = containers
        self.tables = tables
    }
}

/// An existing container: its public access level and its blobs by name.
public struct ObservedContainer: Sendable {
    public var access: PublicAccess
    /// The container's metadata, when it was read (only for a desired state that sets it).
    public var metadata: [String: String]?
    /// Blobs by name, matched by bytes (`ExactString`) as Azure matches names.
    public var blobs: [ExactString: ObservedBlob]

    public init(access: PublicAccess, blobs: [ExactString: ObservedBlob] = [:]) {
        self.access = access
        self.blobs = blobs
    }
}

/// An existing blob as its listing describes it.
public struct ObservedBlob: Sendable, Equatable {
    public var name: String
    public var size: Int
    /// Content-MD5 as base64; nil when the service stored none.
    public var md5: String?
    public var contentType: String?
    /// Everything the listing said of it (content headers, metadata), when the observer kept
    /// it: what a copy compares beyond the content.
    public var listed: BlobProperties?

    /// The ETag the listing gave, quoted as headers carry it (a listing's XML carries it bare).
    public var etag: String? {
        guard let etag = listed?.etag else { return nil }
        return etag.hasPrefix("\"") || etag.hasPrefix("W/") ? etag : "\"" + etag + "\""
    }

    public init(name: String, size: Int, md5: String?, contentType: String?, listed: BlobProperties? = nil) {
        self.name = name
        self.size = size
        self.md5 = md5
        self.contentType = contentType
        self.listed = listed
    }
}

/// An existing table and the entities of the partitions the dataset owns.
public struct ObservedTable: Sendable {
    /// Entities by PartitionKey, then RowKey, keys matched by bytes (`ExactString`).
    public var partitions: [ExactString: [ExactString: TableEntity]]

    public init(partitions: [ExactString: [ExactString: TableEntity]] = [:]) {
        self.partitions = partitions
    }

    public mutating func add(_ entity: TableEntity) {
        partitions[ExactString(entity.partitionKey), default: [:]][ExactString(entity.rowKey)] = entity
    }
}
