import Foundation
import StorageProtocol

/// The Blob service: routes a path-style request (`/<account>/<container>[/<blob>]`) to
/// its operation and answers as Azure does (docs/PROTOCOL.md §7).
struct BlobService: Sendable {
    let store: EmulatorStore
    let account: String
    /// Reads copy sources outside this account (libcurl, on its own event-loop thread).
    var remote = RemoteCopySource()
    /// The largest blob or block a request may store (`--max-blob-mib`), copies from other
    /// accounts included.
    var maxBlobBytes = Int.max
    /// The largest blob a Put Block List may commit (`--max-committed-blob-mib`).
    var maxCommittedBlobBytes = Int.max
    /// How long an archived blob takes to rehydrate at Standard priority (`--rehydrate-seconds`).
    var rehydrationSeconds = 600
    /// Whether requests arrive over HTTPS (customer-provided keys travel only so).
    var secure = false
    /// The account's encryption scopes (`--encryption-scope`).
    var encryptionScopes: Set<String> = []

    /// What the request addresses.
    struct Target {
        var container: String?
        var blob: String?
    }

    /// Answers one request; `upload` is its body when the HTTP layer streamed it into the
    /// byte store (Put Blob, Put Block).
    func respond(_ request: TransportRequest, caller: Caller, upload: StagedUpload? = nil, copyAccess: CopySourceAccess = CopySourceAccess())
        async throws -> BlobReply
    {
        let target = try parseTarget(request.path)
        let query = QueryParameters(request.query)
        let restype = query["restype"]
        let comp = query["comp"]
        let method = request.method
        if caller == .anonymous && SASAuthorization.readsTags(request) {
            throw ServiceError(
                403, .authorizationPermissionMismatch,
                "This request is not authorized to perform this operation using this permission: index tags are read with the tag permission (t), never anonymously."
            )
        }

        // Get Account Information is served on any resource URI: the account, a container, a
        // blob (Azure's documented forms), to whoever may call the service.
        if restype == "account", comp == "properties", method == "GET" || method == "HEAD" {
            guard caller != .anonymous else { throw ServiceError.resourceNotFound }
            return BlobReply(ServiceLevel.accountInformation())
        }
        guard let container = target.container else {
            // The account itself: only List Containers.
            guard caller == .account else { throw ServiceError.resourceNotFound }
            if method == "GET", comp == "list" { return BlobReply(try await listContainers(request, query)) }
            if method == "GET", comp == "blobs" { return BlobReply(try await findBlobsByTags(nil, request, query)) }
            if let answer = ServiceLevel.respond(request, restype: restype, comp: comp) { return BlobReply(answer) }
            if let answer = try await ServiceProperties.respond(request, service: .blob, restype: restype, comp: comp, store: store) {
                return BlobReply(answer)
            }
            throw ServiceError.invalidQuery("comp", comp ?? "")
        }
        guard let blob = target.blob else {
            guard restype == "container" else {
                throw ServiceError(400, .invalidUri, "The requested URI does not represent any resource on the server.")
            }
            if caller == .anonymous {
                try await checkAnonymous(
                    container: container,
                    level: method == "GET" && comp == "list" || (method == "GET" || method == "HEAD") && comp == nil ? "container" : nil)
            }
            if comp != "lease" && method != "DELETE" {
                // Reads and metadata/ACL writes take an optional lease id, which must be the
                // container's active lease (Delete Container checks it in its transaction).
                try await store.checkLease(container: container, name: nil, given: request.headers["x-ms-lease-id"], write: false)
            }
            switch (method, comp) {
            case ("PUT", "lease"): return BlobReply(try await lease(container, nil, request))
            case ("PUT", nil): return BlobReply(try await createContainer(container, request))
            case ("PUT", "acl"): return BlobReply(try await setContainerACL(container, request))
            case ("PUT", "metadata"): return BlobReply(try await setContainerMetadata(container, request))
            case ("PUT", "undelete"): return BlobReply(try await restoreContainer(container, request))
            case ("GET", nil), ("HEAD", nil): return BlobReply(try await containerProperties(container))
            case ("GET", "acl"), ("HEAD", "acl"): return BlobReply(try await containerACL(container))
            case ("GET", "list"): return BlobReply(try await listBlobs(container, request, query, tagCount: caller != .anonymous))
            case ("GET", "blobs"): return BlobReply(try await findBlobsByTags(container, request, query))
            case ("DELETE", nil): return BlobReply(try await deleteContainer(container, request))
            case ("PUT", _), ("GET", _), ("HEAD", _), ("DELETE", _): throw ServiceError.invalidQuery("comp", comp ?? "")
            default: throw ServiceError.unsupportedVerb(method)
            }
        }
        if caller == .anonymous {
            try await checkAnonymous(container: container, level: (method == "GET" || method == "HEAD") && comp == nil ? "blob" : nil)
        }
        try Self.refuseUnimplemented(request)
        // One state at a time: a request naming a snapshot and a version is refused (its SAS
        // and its permission letter follow one, the operation would follow the other).
        if query["snapshot"] != nil && query["versionid"] != nil {
            throw ServiceError(
                400, .invalidQueryParameterValue,
                "Value for one of the query parameters specified in the request URI is invalid: snapshot and versionid exclude each other.")
        }
        if let snapshot = query["snapshot"] { return try await respondToSnapshot(container, blob, snapshot, request, query) }
        if let versionId = query["versionid"] { return try await respondToVersion(container, blob, versionId, request, query) }
        switch (method, comp) {
        case ("PUT", "snapshot"): return BlobReply(try await snapshotBlob(container, blob, request))
        case ("PUT", "tags"): return BlobReply(try await setBlobTags(container, blob, request))
        case ("GET", "tags"): return BlobReply(try await getBlobTags(container, blob, request))
        case ("PUT", nil) where request.headers["x-ms-copy-source"] != nil:
            if request.headers["x-ms-blob-type"] != nil { return BlobReply(try await putBlobFromURL(container, blob, request, access: copyAccess)) }
            return BlobReply(try await copyBlob(container, blob, request, access: copyAccess))
        case ("PUT", "block") where request.headers["x-ms-copy-source"] != nil:
            return BlobReply(try await putBlockFromURL(container, blob, request, query, access: copyAccess))
        case ("PUT", "page") where request.headers["x-ms-copy-source"] != nil:
            return BlobReply(try await putPageFromURL(container, blob, request, access: copyAccess))
        case ("PUT", "appendblock") where request.headers["x-ms-copy-source"] != nil:
            return BlobReply(try await appendBlockFromURL(container, blob, request, access: copyAccess))
        case ("PUT", "page"): return BlobReply(try await putPage(container, blob, request, upload))
        case ("PUT", "appendblock"): return BlobReply(try await appendBlock(container, blob, request, upload))
        case ("PUT", "seal"): return BlobReply(try await sealBlob(container, blob, request))
        case ("PUT", "undelete"): return BlobReply(try await undeleteBlob(container, blob))
        case ("GET", "pagelist"): return BlobReply(try await getPageRanges(container, blob, request, query))
        case ("PUT", "copy"): return BlobReply(try await abortCopy(container, blob, request, query))
        case ("PUT", "incrementalcopy"): return BlobReply(try await incrementalCopy(container, blob, request, access: copyAccess))
        case ("PUT", "tier"): return BlobReply(try await setBlobTier(container, blob, request))
        case ("PUT", "lease"): return BlobReply(try await lease(container, blob, request))
        case ("PUT", nil): return BlobReply(try await putBlob(container, blob, request, upload))
        case ("PUT", "block"): return BlobReply(try await putBlock(container, blob, request, query, upload))
        case ("PUT", "blocklist"): return BlobReply(try await putBlockList(container, blob, request))
        case ("PUT", "properties"): return BlobReply(try await setBlobProperties(container, blob, request))
        case ("PUT", "metadata"): return BlobReply(try await setBlobMetadata(container, blob, request))
        case ("POST", "query"): return try await queryBlob(container, blob, request)
        case ("GET", nil): return try await getBlob(container, blob, request, head: false, tagCount: caller != .anonymous)
        case ("HEAD", nil): return try await getBlob(container, blob, request, head: true, tagCount: caller != .anonymous)
        case ("GET", "blocklist"): return BlobReply(try await getBlockList(container, blob, request, query))
        case ("DELETE", nil): return BlobReply(try await deleteBlob(container, blob, request))
        case ("PUT", _), ("GET", _), ("HEAD", _), ("DELETE", _): throw ServiceError.invalidQuery("comp", comp ?? "")
        default: throw ServiceError.unsupportedVerb(method)
        }
    }

    /// Headers that change what a blob operation means and that the emulator does not
    /// implement (tags, time conditions, customer keys, immutability, tiers other than Hot on
    /// a write): refused with 400 UnsupportedHeader, never ignored. (Leases are implemented.)
    static let unimplementedHeaders = [
        "x-ms-immutability-policy-until-date", "x-ms-immutability-policy-mode",
        "x-ms-legal-hold",
    ]

    static func refuseUnimplemented(_ request: TransportRequest) throws {
        for name in unimplementedHeaders where request.headers[name] != nil { throw ServiceError.unsupportedHeader(name) }
        // Time conditions are honoured on reads and on every write that takes conditions;
        // Put Block, Set Blob Tier and Abort Copy take none on Azure: refused there, not ignored.
        let comp = request.query.first { $0.name == "comp" }?.value
        // The x-ms-blob-if-* conditions belong to Set and Get Blob Tags alone.
        if comp != "tags" {
            for name in ["x-ms-blob-if-match", "x-ms-blob-if-none-match", "x-ms-blob-if-modified-since", "x-ms-blob-if-unmodified-since"]
            where request.headers[name] != nil {
                throw ServiceError.unsupportedHeader(name)
            }
        }
        // The tier-time conditions belong to Delete Blob alone.
        if request.method != "DELETE" || comp != nil {
            for name in ["x-ms-access-tier-if-modified-since", "x-ms-access-tier-if-unmodified-since"] where request.headers[name] != nil {
                throw ServiceError.unsupportedHeader(name)
            }
        }
        if request.method == "PUT", ["block", "tier", "copy"].contains(comp ?? "") {
            for name in ["If-Modified-Since", "If-Unmodified-Since", "If-Match", "If-None-Match"] where request.headers[name] != nil {
                throw ServiceError.unsupportedHeader(name)
            }
        }
    }

    /// Anonymous callers may only read, and only what the container's access level allows:
    /// `container` allows container reads and listing, `blob` only blob reads. Anything else
    /// looks like a missing resource, so a private container's existence is not revealed.
    private func checkAnonymous(container: String, level needed: String?) async throws {
        guard let needed, let record = try await store.container(container) else { throw ServiceError.resourceNotFound }
        let allowed = record.access == "container" || (record.access == "blob" && needed == "blob")
        guard allowed else { throw ServiceError.resourceNotFound }
    }

    /// The names Azure gives its own containers, which break the naming rule by design.
    static let reservedContainers: Set<String> = ["$root", "$logs", "$web", "$blobchangefeed"]

    /// A name no container can have is refused on every request, not only on create (a
    /// `HEAD` answering 404 would tell a client the container may be created): 400
    /// OutOfRangeInput for its length, InvalidResourceName for its characters, as Azure says.
    static func checkContainerName(_ name: String) throws(ServiceError) {
        guard !reservedContainers.contains(name), let problem = StorageNames.containerProblem(name) else { return }
        if !(3...63).contains(name.utf8.count) {
            throw ServiceError(400, .outOfRangeInput, "The specified resource name length is not within the permissible limits: \(problem).")
        }
        throw ServiceError(400, .invalidResourceName, "The specifed resource name contains invalid characters: \(problem).")
    }

    /// Splits `/<account>/<container>/<blob…>`; the blob name is percent-decoded.
    func parseTarget(_ path: String) throws -> Target {
        var rest = Substring(path)
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        let segments = rest.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard let first = segments.first, first == account else {
            throw ServiceError(400, .invalidUri, "The request URI does not start with the account name '\(account)'.")
        }
        guard segments.count > 1, !segments[1].isEmpty else { return Target() }
        guard let container = String(segments[1]).removingPercentEncoding else {
            throw ServiceError(400, .invalidUri, "The container name in the request URI is not valid percent-encoding.")
        }
        // No container name holds a control character; soft-deleted containers live under names
        // that start with one, which no request may reach.
        if container.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw ServiceError(
                400, .invalidResourceName, "The specifed resource name contains invalid characters: a control character in the container name.")
        }
        try Self.checkContainerName(container)
        guard segments.count > 2, !segments[2].isEmpty else { return Target(container: container) }
        guard let blob = String(segments[2]).removingPercentEncoding else {
            throw ServiceError(400, .invalidUri, "The blob name in the request URI is not valid percent-encoding.")
        }
        // A name XML cannot carry (U+FFFE, U+FFFF) is listed percent-encoded (``XMLEscape/name(_:)``).
        if let problem = StorageNames.blobProblem(blob) {
            throw ServiceError(400, .invalidResourceName, "The specifed resource name contains invalid characters: \(problem).")
        }
        return Target(container: container, blob: blob)
    }
}

/// Decoded query parameters; a name that appears twice keeps its first value.
struct QueryParameters: Sendable {
    private var values: [String: String] = [:]

    init(_ pairs: [(name: String, value: String)]) {
        for (name, value) in pairs where values[name] == nil { values[name] = value }
    }

    subscript(name: String) -> String? { values[name] }
}

/// `x-ms-meta-*` headers as (name, value) pairs, in the order sent.
/// Names must be C# identifiers, as on Azure: `x-ms-meta-1abc`, `x-ms-meta-a!b` or an empty
/// name is 400 InvalidMetadata (accepted, such a name once broke every later listing).
func metadataHeaders(_ headers: HeaderFields) throws(ServiceError) -> [(String, String)] {
    var pairs: [(String, String)] = []
    for field in headers.fields where field.name.lowercased().hasPrefix("x-ms-meta-") {
        let name = String(field.name.dropFirst("x-ms-meta-".count))
        guard let first = name.unicodeScalars.first, first == "_" || first.properties.isAlphabetic,
            name.unicodeScalars.allSatisfy({ $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) })
        else {
            throw ServiceError(
                400, .invalidMetadata,
                "The metadata specified is invalid. It has characters that are not permitted: '\(name)' is not a C# identifier.")
        }
        pairs.append((name, field.value))
    }
    return pairs
}
