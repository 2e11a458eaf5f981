import Foundation

/// Anonymous read access of a container, as `x-ms-blob-public-access` carries it: what a
/// dataset's `access:`, `--access` and a plan name with the same words.
public enum PublicAccess: String, Sendable, CaseIterable {
    case container, blob
    /// No anonymous access (the header is absent on the wire).
    case `private`
}

/// A blob's properties, from HEAD or a listing.
public struct BlobProperties: Sendable, Equatable {
    public var name: String
    public var contentLength: Int
    public var contentType: String?
    /// The stored MD5, base64.
    public var contentMD5: String?
    public var cacheControl: String?
    public var contentEncoding: String?
    public var contentLanguage: String?
    public var contentDisposition: String?
    public var etag: String?
    public var lastModified: String?
    public var metadata: [String: String]
    /// The access tier the service reports (`Hot`, `Cool`, `Cold`, `Archive`), whether set or
    /// inferred from the account's default; nil when it reports none.
    public var accessTier: String?
    /// The lease's state as the service reports it (`available`, `leased`, `expired`,
    /// `breaking`, `broken`); nil when it reports none.
    public var leaseState: String?

    public init(
        name: String, contentLength: Int, contentType: String? = nil, contentMD5: String? = nil, cacheControl: String? = nil,
        contentEncoding: String? = nil, contentLanguage: String? = nil, contentDisposition: String? = nil,
        etag: String? = nil, lastModified: String? = nil, metadata: [String: String] = [:], accessTier: String? = nil
    ) {
        self.name = name
        self.contentLength = contentLength
        self.contentType = contentType
        self.contentMD5 = contentMD5
        self.cacheControl = cacheControl
        self.contentEncoding = contentEncoding
        self.contentLanguage = contentLanguage
        self.contentDisposition = contentDisposition
        self.etag = etag
        self.lastModified = lastModified
        self.metadata = metadata
        self.accessTier = accessTier
    }

    /// What a copy of this blob stores besides its bytes: its content headers and metadata.
    public var uploadOptions: BlobUploadOptions {
        BlobUploadOptions(
            contentType: contentType ?? "application/octet-stream", cacheControl: cacheControl, contentEncoding: contentEncoding,
            contentLanguage: contentLanguage, contentDisposition: contentDisposition, metadata: metadata)
    }
}

/// What Put Blob stores besides the bytes.
public struct BlobUploadOptions: Sendable, Equatable {
    public var contentType: String
    public var cacheControl: String?
    public var contentEncoding: String?
    public var contentLanguage: String?
    public var contentDisposition: String?
    public var metadata: [String: String]
    /// Fail with 409 BlobAlreadyExists instead of overwriting.
    public var onlyIfAbsent: Bool
    /// The lease to write a leased blob under (`x-ms-lease-id`).
    public var leaseID: String? = nil
    /// Write only over the blob with this ETag (`If-Match`; 412 ConditionNotMet otherwise).
    public var ifMatch: String? = nil

    /// The conditions of the request that stores the blob (Put Blob, Put Blob From URL, Put
    /// Block List): never on a staged block, which replaces nothing.
    var conditionHeaders: HeaderFields {
        var headers = HeaderFields()
        if onlyIfAbsent { headers["If-None-Match"] = "*" }
        if let ifMatch { headers["If-Match"] = ifMatch }
        return headers
    }

    public init(
        contentType: String = "application/octet-stream", cacheControl: String? = nil, contentEncoding: String? = nil,
        contentLanguage: String? = nil, contentDisposition: String? = nil, metadata: [String: String] = [:], onlyIfAbsent: Bool = false
    ) {
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.contentEncoding = contentEncoding
        self.contentLanguage = contentLanguage
        self.contentDisposition = contentDisposition
        self.metadata = metadata
        self.onlyIfAbsent = onlyIfAbsent
    }

    /// The `x-ms-blob-*` content headers and `x-ms-meta-*` of a Put Blob, Put Block List or
    /// Put Blob From URL that stores these.
    var headers: HeaderFields {
        var headers = HeaderFields()
        headers["x-ms-blob-content-type"] = contentType
        if let cacheControl { headers["x-ms-blob-cache-control"] = cacheControl }
        if let contentEncoding { headers["x-ms-blob-content-encoding"] = contentEncoding }
        if let contentLanguage { headers["x-ms-blob-content-language"] = contentLanguage }
        if let contentDisposition { headers["x-ms-blob-content-disposition"] = contentDisposition }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { headers["x-ms-meta-\(key)"] = value }
        if let leaseID { headers["x-ms-lease-id"] = leaseID }
        return headers
    }
}
