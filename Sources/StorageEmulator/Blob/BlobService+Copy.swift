import Foundation
import StorageProtocol

/// Copy Blob, Copy Blob From URL, Put Blob From URL, Put Block From URL and Abort Copy Blob,
/// from blobs of this emulator's own account or from any URL it can read. Copies finish before the answer, as Azurite's
/// do, so a Copy Blob's status is always `success`.
extension BlobService {
    /// Headers that change what a copy means and that the emulator does not implement: a
    /// request carrying one is refused, never carried out as if it were absent.
    static let unsupportedCopyHeaders = [
        "x-ms-source-lease-id", "x-ms-incremental-copy",
    ]

    func refuseUnsupportedCopyHeaders(_ request: TransportRequest) throws {
        for name in Self.unsupportedCopyHeaders where request.headers[name] != nil {
            throw ServiceError.unsupportedHeader(name)
        }
        if !request.body.isEmpty {
            throw ServiceError(400, .invalidHeaderValue, "A request with x-ms-copy-source carries no body; send Content-Length: 0.")
        }
    }

    /// What, besides a public container, lets a copy read a source of this account.
    struct CopySourceAccess: Sendable {
        /// The request was signed with the account's Shared Key (not a SAS, not a token).
        var sharedKey = false
        /// Verifies a SAS carried by the source URL as any SAS is verified, for a read of the
        /// source; throws CannotVerifyCopySource with the status the source would answer.
        var verifySAS: @Sendable (TransportRequest) async throws -> Void = { _ in throw BlobService.copySourceNotAuthorized }
        /// Verifies `x-ms-copy-source-authorization` (`Bearer <token>`) as a bearer token of a
        /// read of the source; throws CannotVerifyCopySource with the status the source would answer.
        var verifyToken: @Sendable (TransportRequest) async throws -> Void = { _ in throw BlobService.copySourceNotAuthorized }
    }

    /// Where a copy reads from: a blob of this emulator's own account, or any other URL.
    enum CopySource {
        case local(BlobRecord)
        case remote(String)
    }

    /// The bytes a copy read, staged, with the source's properties, metadata and committed
    /// blocks (a remote source has none: its bytes become one block).
    struct CopiedBytes {
        var upload: StagedUpload
        var properties: BlobHTTPProperties
        var metadata: [(String, String)]
        var blocks: [CommittedBlock]
        /// The blob read, when it is one of this account's.
        var source: BlobRecord? = nil
    }

    /// The source a copy names in `x-ms-copy-source`. It is this account's when its host and
    /// port are the ones the request was sent to (loopback names count as one), and its path
    /// starts with this account; any other URL is read over the network, as Azure reads a
    /// source in another account (from allowed origins only, ``RemoteCopySource``).
    ///
    /// A source of this account is read only when the source itself lets the caller read it,
    /// as on Azure (docs/SECURITY.md, "SAS holder"): it carries a SAS of its own that grants
    /// `r` on it (verified like any SAS), or its container is public, or — the one implicit
    /// case — the operation is Copy Blob (asynchronous) signed with the account's Shared Key
    /// (`access.sharedKey`, `asynchronous`). Otherwise 401 CannotVerifyCopySource: a write
    /// grant on the destination is no read grant on the source.
    func copySource(_ request: TransportRequest, access: CopySourceAccess, asynchronous: Bool = false) async throws -> (
        url: String, source: CopySource
    ) {
        let text = request.headers["x-ms-copy-source"] ?? ""
        guard var parsed = TransportRequest(method: "GET", url: text), let scheme = text.split(separator: ":").first,
            ["http", "https"].contains(scheme.lowercased())
        else {
            throw ServiceError(400, .invalidHeaderValue, "The value for one of the HTTP headers is not in the correct format: x-ms-copy-source.")
        }
        let snapshot = parsed.query.first { $0.name == "snapshot" }?.value
        if let snapshot { try Self.checkSnapshot(snapshot) }
        let versionId = parsed.query.first { $0.name == "versionid" }?.value
        if let versionId, EdmDateTime(iso8601: versionId) == nil { throw ServiceError.invalidQuery("versionid", versionId) }
        // A URL naming this account in its host (`devstoreaccount1.blob.core.windows.net`, as
        // `az storage blob copy start --source-container` writes it, or `….blob.localhost`) is
        // this account, whatever host and port follow; so is a path-style URL of this server.
        let sourceHost = parsed.origin.split(separator: "://", maxSplits: 1).last.map(String.init) ?? ""
        if VirtualHost.names(sourceHost, account: account, service: "blob") {
            parsed.path = "/" + account + parsed.path
        } else if !Self.sameAuthority(parsed.origin, request.headers["Host"]) {
            return (text, .remote(text))
        }
        guard let target = try? parseTarget(parsed.path) else {
            return (text, .remote(text))
        }
        guard let container = target.container, let blob = target.blob else {
            throw ServiceError(400, .invalidHeaderValue, "x-ms-copy-source does not name a blob.")
        }
        let (containerRecord, found) = try await store.blob(container, blob, snapshot: snapshot, versionId: versionId)
        // A source's tags are read only by who may read tags: the account (Shared Key) or a
        // token for the source — never through a SAS without `t` or a public container. That
        // holds for the condition on them and for copying them (tag option COPY).
        let readsTags =
            request.headers["x-ms-source-if-tags"] != nil || request.headers["x-ms-copy-source-tag-option"]?.uppercased() == "COPY"
        if readsTags, !access.sharedKey, request.headers["x-ms-copy-source-authorization"] == nil {
            throw ServiceError(
                403, .authorizationPermissionMismatch,
                "This request is not authorized to perform this operation using this permission: reading the source's index tags (x-ms-source-if-tags, x-ms-copy-source-tag-option: COPY) needs the account key or a token for the source."
            )
        }
        if let token = request.headers["x-ms-copy-source-authorization"] {
            // A token for the source authorizes its read, as the Authorization header would.
            var read = parsed
            read.headers["Authorization"] = token
            read.headers["x-ms-version"] = request.headers["x-ms-version"]
            try await access.verifyToken(read)
        } else if SharedAccessSignature.isPresent(in: parsed) {
            try await access.verifySAS(parsed)
        } else if let access = containerRecord?.access, access == "blob" || access == "container" {
            // Public: anyone may read it, so may a copy.
        } else if !(access.sharedKey && asynchronous) {
            throw Self.copySourceNotAuthorized
        }
        guard containerRecord != nil, let record = found else {
            throw ServiceError(404, .cannotVerifyCopySource, "The specified resource does not exist.")
        }
        // Azure copies an archived source by rehydrating it into the destination, which stays
        // pending meanwhile; copies here finish before the answer, so that one is refused.
        if record.isArchived { throw EmulatorStore.blobArchived }
        try Self.refuseIncrementalCopyRead(record)
        // A source written with a customer key is read only with it (`x-ms-source-encryption-*`).
        try BlobEncryption.checkKey(try BlobEncryption.sourceKey(request, secure: secure), for: record)
        _ = try Self.rehydratePriority(request)
        return (text, .local(record))
    }

    /// A source of this account that the request has no right to read.
    static var copySourceNotAuthorized: ServiceError {
        var error = ServiceError(
            401, .cannotVerifyCopySource,
            "Server failed to authenticate the request. The copy source is not public and carries no SAS of its own granting read (a write grant on the destination does not authorize reading the source)."
        )
        error.headers.append(("x-ms-copy-source-status-code", "401"))
        error.headers.append(("x-ms-copy-source-error-code", AzureStorageError.Code.noAuthenticationInformation.rawValue))
        return error
    }

    /// Whether `origin` (`scheme://host[:port]`) is where `host` (the request's Host header)
    /// points. Without a Host header (HTTP/1.0), every source is taken as this account's.
    static func sameAuthority(_ origin: String, _ host: String?) -> Bool {
        guard let host else { return true }
        let authority = origin.split(separator: "://", maxSplits: 1).last.map(String.init) ?? origin
        func split(_ text: String) -> (host: String, port: String) {
            let lower = text.lowercased()
            if let colon = lower.lastIndex(of: ":"), !lower[colon...].contains("]") {
                return (String(lower[..<colon]), String(lower[lower.index(after: colon)...]))
            }
            return (lower, origin.lowercased().hasPrefix("https") ? "443" : "80")
        }
        let a = split(authority)
        let b = split(host)
        let loopback: Set<String> = ["127.0.0.1", "localhost", "[::1]"]
        return a.port == b.port && (a.host == b.host || (loopback.contains(a.host) && loopback.contains(b.host)))
    }

    /// `x-ms-source-content-md5` / `x-ms-source-content-crc64` against the bytes read from the source.
    static func sourceChecksumProblem(_ request: TransportRequest, _ upload: StagedUpload) -> ServiceError? {
        checksumProblem(request, upload, md5: "x-ms-source-content-md5", crc64: "x-ms-source-content-crc64")
    }

    /// The MD5 and CRC64 the request states in headers `md5` and `crc64`, against the bytes.
    static func checksumProblem(_ request: TransportRequest, _ upload: StagedUpload, md5: String, crc64: String) -> ServiceError? {
        if let expected = request.headers[md5], expected != upload.md5 {
            return ServiceError(
                400, .md5Mismatch, "The MD5 value specified in the request did not match with the MD5 value calculated by the server.")
        }
        if let expected = request.headers[crc64], expected != upload.crc64 {
            return ServiceError(
                400, .crc64Mismatch, "The CRC64 value specified in the request did not match with the CRC64 value calculated by the server.")
        }
        return nil
    }

    /// The source condition of a copy (`x-ms-source-if-match`): the ETag the source must still
    /// have. Not met is 412 SourceConditionNotMet, nothing written.
    static let sourceConditionNotMet = ServiceError(
        412, .sourceConditionNotMet, "The source condition specified using HTTP conditional header(s) is not met.")

    /// Reads a copy's source (bytes `range` of it, else all) into the byte store, on the
    /// request's source condition (`x-ms-source-if-match`, compared exactly).
    /// `maxBytes`: the most the operation may store (a remote source larger is refused).
    func copyBytes(from source: CopySource, range: (start: Int, end: Int?)? = nil, maxBytes: Int, _ request: TransportRequest) async throws
        -> CopiedBytes
    {
        let ifMatch = request.headers["x-ms-source-if-match"]
        let others = ["x-ms-source-if-none-match", "x-ms-source-if-modified-since", "x-ms-source-if-unmodified-since", "x-ms-source-if-tags"]
        switch source {
        case .local(let asked):
            let conditions = try sourceConditions(request)
            try conditions.check(asked)
            // What would be stored, bounded before a byte is read (a page blob declares up to 8 TiB).
            let length = range.map { min($0.end ?? (asked.size - 1), asked.size - 1) - $0.start + 1 } ?? asked.size
            if length > maxBytes { throw remote.tooLarge(length, maxBytes) }
            let (upload, record) = try await store.copyBytes(of: asked, range: range)
            do {
                // Rewritten between the look and the read: the bytes may not be the version asked for.
                try conditions.check(record)
                if upload.size > maxBytes { throw remote.tooLarge(upload.size, maxBytes) }
            } catch {
                await upload.release(from: store.bytes)
                throw error
            }
            return CopiedBytes(
                upload: upload, properties: record.properties, metadata: record.metadata, blocks: range == nil ? record.blocks : [],
                source: record)
        case .remote(let url):
            // Only x-ms-source-if-match is sent on to another service; the others are refused there.
            if let name = others.first(where: { request.headers[$0] != nil }) {
                throw ServiceError.unsupportedHeader("\(name) on a source outside this emulator")
            }
            let fetched = try await remote.fetch(
                url, range: range, ifMatch: ifMatch == "*" ? nil : ifMatch, authorization: request.headers["x-ms-copy-source-authorization"],
                maxBytes: maxBytes, into: store.bytes, now: Date())
            return CopiedBytes(upload: fetched.upload, properties: fetched.properties, metadata: fetched.metadata, blocks: [])
        }
    }

    /// The destination's tags: the request's `x-ms-tags` (`x-ms-copy-source-tag-option:
    /// REPLACE`, the default), or the source's (`COPY`, a source of this account only).
    func copyTags(_ request: TransportRequest, _ copied: CopiedBytes) throws -> BlobTags? {
        switch request.headers["x-ms-copy-source-tag-option"]?.uppercased() {
        case nil, "REPLACE": return try BlobTags.header(request)
        case "COPY":
            if request.headers["x-ms-tags"] != nil { throw ServiceError.invalidHeader("x-ms-tags", "(not with x-ms-copy-source-tag-option: COPY)") }
            guard let source = copied.source else {
                throw ServiceError.unsupportedHeader("x-ms-copy-source-tag-option: COPY from a source outside this emulator")
            }
            return source.tags
        case let other?: throw ServiceError.invalidHeader("x-ms-copy-source-tag-option", other)
        }
    }

    /// `x-ms-source-if-*` of a copy, checked against a source of this account, ETags compared
    /// exactly; not met is 412 SourceConditionNotMet, nothing written.
    struct SourceConditions {
        var conditions: WriteConditions
        /// Whether the operation reads its source as a client would, with the conditions on
        /// its GET (the From URL operations, Copy Blob with `x-ms-requires-sync`): a condition
        /// not met is then the source's answer, CannotVerifyCopySource, as Azure reports it.
        /// Copy Blob checks them itself: 412 SourceConditionNotMet.
        var readByURL = false

        func check(_ source: BlobRecord) throws {
            // A source's tags not met is Azure's ConditionNotMet (what the SDK's own test expects).
            try conditions.checkTags(source)
            do {
                try conditions.checkETagAndTime(etag: source.etag, modified: source.modified, exists: true) { WriteConditions.notMet }
            } catch {
                guard readByURL else { throw BlobService.sourceConditionNotMet }
                var refused = ServiceError(412, .cannotVerifyCopySource, "The condition specified using HTTP conditional header(s) is not met.")
                refused.headers = [
                    ("x-ms-copy-source-status-code", "412"), ("x-ms-copy-source-error-code", AzureStorageError.Code.conditionNotMet.rawValue),
                ]
                throw refused
            }
        }
    }

    func sourceConditions(_ request: TransportRequest) throws -> SourceConditions {
        let h = request.headers
        func date(_ name: String) throws -> Date? { try Self.dateHeader(h, name) }
        return SourceConditions(
            conditions: WriteConditions(
                ifMatch: h["x-ms-source-if-match"], ifNoneMatch: h["x-ms-source-if-none-match"],
                ifModifiedSince: try date("x-ms-source-if-modified-since"), ifUnmodifiedSince: try date("x-ms-source-if-unmodified-since"),
                ifTags: try h["x-ms-source-if-tags"].map { try TagExpression.parse($0, condition: true) }),
            readByURL: !Self.isAsynchronousCopy(request))
    }

    /// Copy Blob without `x-ms-requires-sync` (not Put Blob From URL, not a From URL operation).
    static func isAsynchronousCopy(_ request: TransportRequest) -> Bool {
        request.method == "PUT" && request.headers["x-ms-blob-type"] == nil && request.headers["x-ms-requires-sync"]?.lowercased() != "true"
            && !request.query.contains { $0.name == "comp" }
    }

    /// Copy Blob (and Copy Blob From URL with `x-ms-requires-sync: true`): 202, finished.
    func copyBlob(_ container: String, _ blob: String, _ request: TransportRequest, access: CopySourceAccess) async throws -> TransportResponse {
        try refuseUnsupportedCopyHeaders(request)
        let synchronous = request.headers["x-ms-requires-sync"]?.lowercased() == "true"
        let (source, asked) = try await copySource(request, access: access, asynchronous: !synchronous)
        let copyID = UUID().uuidString.lowercased()
        // The source URL is kept for x-ms-copy-source, without its SAS signature: it would hand a
        // read grant on the source to every reader of the destination (public ones included).
        let shownSource = TransportRequest(method: "GET", url: source).map(RequestLog.displayURL) ?? source
        if case .local(let record) = asked, record.type == .page {
            return try await copyPageBlob(record, to: container, blob, request, id: copyID, shownSource: shownSource)
        }
        // Copy Blob From URL copies at most 256 MiB on Azure; every copy at most what a direct write may.
        let copied = try await copyBytes(from: asked, maxBytes: synchronous ? min(256 << 20, maxBlobBytes) : maxBlobBytes, request)
        let upload = copied.upload
        // The destination keeps the source's committed block list and type, as on Azure; an
        // append blob copy is sealed when its source is, or when `x-ms-seal-blob` asks.
        let type = copied.source?.type ?? .block
        // Absent, the copy is sealed when its source is; `x-ms-seal-blob` says so either way.
        let sealHeader = request.headers["x-ms-seal-blob"]?.lowercased()
        if let sealHeader, sealHeader != "true", sealHeader != "false" { throw ServiceError.invalidHeader("x-ms-seal-blob", sealHeader) }
        let seal = sealHeader == "true"
        let tier = try writeTier(request)
        if tier != nil && type != .block { throw ServiceError.invalidHeader("x-ms-access-tier", "\(tier ?? "") (a tier is set on block blobs only)") }
        if seal && type != .append { throw ServiceError.invalidHeader("x-ms-seal-blob", "true (the source is no append blob)") }
        let destination = try await committing(upload) {
            try await store.putBlob(
                container: container, name: blob, upload: upload, properties: copied.properties,
                metadata: try requestMetadata(request) ?? copied.metadata, conditions: conditions(request),
                copy: CopyInfo(id: copyID, source: shownSource, bytes: upload.size, completed: store.clock.now()),
                blocks: copied.blocks, type: type, appendCount: copied.source?.appendCount ?? 0,
                sealed: type == .append && (sealHeader.map { $0 == "true" } ?? (copied.source?.sealed == true)), tier: tier,
                tags: try copyTags(request, copied))
        }
        var headers = blobHeaders(destination)
        headers["x-ms-copy-id"] = copyID
        headers["x-ms-copy-status"] = "success"
        return TransportResponse(status: 202, headers: headers)
    }

    /// Copy Blob of a page blob of this account: a page blob as sparse as its source.
    private func copyPageBlob(_ asked: BlobRecord, to container: String, _ blob: String, _ request: TransportRequest, id: String, shownSource: String)
        async throws -> TransportResponse
    {
        let conditions = try sourceConditions(request)
        try conditions.check(asked)
        guard let pages = try await store.copyPages(of: asked) else {
            throw ServiceError(409, .blobOverwritten, "The source blob changed while it was copied; try again.")
        }
        let destination: BlobRecord
        do {
            destination = try await store.commitBlob(
                container: container, name: blob, dataID: "", size: asked.size, blocks: [], properties: asked.properties,
                metadata: try requestMetadata(request) ?? asked.metadata, conditions: try self.conditions(request),
                copy: CopyInfo(id: id, source: shownSource, bytes: asked.size, completed: store.clock.now()), type: .page,
                sequenceNumber: asked.sequenceNumber, pages: pages)
        } catch {
            await store.deleteBytes(pages.map(\.data))
            throw error
        }
        var headers = blobHeaders(destination)
        headers["x-ms-copy-id"] = id
        headers["x-ms-copy-status"] = "success"
        return TransportResponse(status: 202, headers: headers)
    }

    /// Put Blob From URL: the source's bytes (and properties, unless `x-ms-copy-source-blob-properties: false`) as a new block blob; 201.
    func putBlobFromURL(_ container: String, _ blob: String, _ request: TransportRequest, access: CopySourceAccess) async throws -> TransportResponse
    {
        try refuseUnsupportedCopyHeaders(request)
        let (_, asked) = try await copySource(request, access: access)
        let copied = try await copyBytes(from: asked, maxBytes: maxBlobBytes, request)
        let upload = copied.upload
        if let problem = Self.sourceChecksumProblem(request, upload) {
            await upload.release(from: store.bytes)
            throw problem
        }
        let keepSource = request.headers["x-ms-copy-source-blob-properties"]?.lowercased() != "false"
        var properties = keepSource ? copied.properties : httpProperties(request, computedMD5: upload.md5)
        if keepSource { properties.override(with: request) }
        let destination = try await committing(upload) {
            try await store.putBlob(
                container: container, name: blob, upload: upload, properties: properties,
                metadata: try requestMetadata(request) ?? (keepSource ? copied.metadata : []), conditions: conditions(request),
                tier: try writeTier(request), tags: try copyTags(request, copied))
        }
        var headers = blobHeaders(destination)
        if let md5 = destination.properties.contentMD5 { headers["Content-MD5"] = md5 }
        headers["x-ms-content-crc64"] = upload.crc64
        headers["x-ms-request-server-encrypted"] = "true"
        return TransportResponse(status: 201, headers: headers)
    }

    /// Put Block From URL: a range of the source (`x-ms-source-range: bytes=s-e`, or all of it) staged as a block; 201.
    func putBlockFromURL(_ container: String, _ blob: String, _ request: TransportRequest, _ query: QueryParameters, access: CopySourceAccess)
        async throws -> TransportResponse
    {
        guard let id = query["blockid"], let decoded = Data(base64Encoded: id), !decoded.isEmpty, decoded.count <= 64 else {
            throw ServiceError.invalidQuery("blockid", query["blockid"] ?? "")
        }
        try refuseUnsupportedCopyHeaders(request)
        // As Put Block: a leased blob's blocks are staged only with its lease id.
        try await store.checkLease(container: container, name: blob as String?, given: request.headers["x-ms-lease-id"], write: true)
        let (_, source) = try await copySource(request, access: access)
        var range: (start: Int, end: Int?)?
        if let text = request.headers["x-ms-source-range"] {
            guard let parsed = Self.byteRange(text) else {
                throw ServiceError(416, .invalidRange, "The range specified is invalid for the current size of the resource.")
            }
            range = parsed
        }
        let upload = try await copyBytes(from: source, range: range, maxBytes: maxBlobBytes, request).upload
        if let problem = Self.sourceChecksumProblem(request, upload) {
            await upload.release(from: store.bytes)
            throw problem
        }
        let encryption = try conditions(request).encryption
        try await committing(upload) {
            try await store.putBlock(container: container, blob: blob, blockID: id, upload: upload, encryption: encryption)
        }
        return TransportResponse(
            status: 201,
            headers: Self.encryptionHeaders(
                try conditions(request).encryption,
                HeaderFields([("Content-MD5", upload.md5), ("x-ms-content-crc64", upload.crc64), ("x-ms-request-server-encrypted", "true")])))
    }

    /// Abort Copy Blob: copies here are finished when they are answered, so there is never one to abort.
    func abortCopy(_ container: String, _ blob: String, _ request: TransportRequest, _ query: QueryParameters) async throws -> TransportResponse {
        guard request.headers["x-ms-copy-action"]?.lowercased() == "abort" else {
            throw ServiceError(400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: x-ms-copy-action.")
        }
        let (containerRecord, found) = try await store.blob(container, blob)
        guard containerRecord != nil else { throw EmulatorStore.containerNotFound }
        guard let record = found else { throw EmulatorStore.blobNotFound }
        if let copy = record.copy, let id = query["copyid"], id != copy.id {
            throw ServiceError(409, .copyIdMismatch, "The specified copy ID did not match the copy ID for the pending copy operation.")
        }
        throw ServiceError(409, .noPendingCopyOperation, "There is currently no pending copy operation.")
    }

    /// Runs the commit of a locally made upload, deleting the bytes if it fails.
    private func committing<T>(_ upload: StagedUpload, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            await upload.release(from: store.bytes)
            throw error
        }
    }

    /// `x-ms-meta-*` of the request, or nil when it sends none (then the source's are kept).
    func requestMetadata(_ request: TransportRequest) throws -> [(String, String)]? {
        let sent = try metadataHeaders(request.headers)
        return sent.isEmpty ? nil : sent
    }

    /// Offsets past this are no blob's (Azure's largest is under 2^48): a range beyond it is
    /// refused, so no arithmetic on a stranger's offset can overflow.
    static let maxOffset = 1 << 53

    /// `bytes=s-e` or `bytes=s-`; nil when unreadable or beyond ``maxOffset``.
    static func byteRange(_ text: String) -> (start: Int, end: Int?)? {
        guard text.hasPrefix("bytes=") else { return nil }
        let parts = text.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Int(parts[0]), (0...maxOffset).contains(start) else { return nil }
        if parts[1].isEmpty { return (start, nil) }
        guard let end = Int(parts[1]), end >= start, end <= maxOffset else { return nil }
        return (start, end)
    }
}

extension BlobHTTPProperties {
    /// `x-ms-blob-*` headers of the request replace the copied values they name.
    mutating func override(with request: TransportRequest) {
        let h = request.headers
        if let v = h["x-ms-blob-content-type"] { contentType = v }
        if let v = h["x-ms-blob-content-md5"] { contentMD5 = v }
        if let v = h["x-ms-blob-content-encoding"] { contentEncoding = v }
        if let v = h["x-ms-blob-content-language"] { contentLanguage = v }
        if let v = h["x-ms-blob-content-disposition"] { contentDisposition = v }
        if let v = h["x-ms-blob-cache-control"] { cacheControl = v }
    }
}
