import Crypto
import Foundation
import StorageProtocol

extension BlobService {
    static func md5(_ data: Data) -> String { Data(Insecure.MD5.hash(data: data)).base64EncodedString() }

    /// The HTTP date in header `name`; present but unreadable is 400 InvalidHeaderValue.
    static func dateHeader(_ headers: HeaderFields, _ name: String) throws -> Date? {
        guard let text = headers[name] else { return nil }
        guard let date = ServerClock.parseHTTPDate(text) else { throw ServiceError.invalidHeader(name, text) }
        return date
    }

    /// The write conditions a request carries; a header that is present but unreadable is
    /// 400 InvalidHeaderValue, never ignored.
    func conditions(_ request: TransportRequest) throws -> WriteConditions {
        let h = request.headers
        func date(_ name: String) throws -> Date? { try Self.dateHeader(h, name) }
        func number<T: FixedWidthInteger>(_ name: String, _: T.Type) throws -> T? {
            guard let text = h[name] else { return nil }
            guard let value = T(text), value >= 0 else { throw ServiceError.invalidHeader(name, text) }
            return value
        }
        return WriteConditions(
            ifMatch: h["If-Match"], ifNoneMatch: h["If-None-Match"], ifModifiedSince: try date("If-Modified-Since"),
            ifUnmodifiedSince: try date("If-Unmodified-Since"), leaseID: h["x-ms-lease-id"],
            sequenceNumberLE: try number("x-ms-if-sequence-number-le", Int64.self),
            sequenceNumberLT: try number("x-ms-if-sequence-number-lt", Int64.self),
            sequenceNumberEQ: try number("x-ms-if-sequence-number-eq", Int64.self),
            maxSize: try number("x-ms-blob-condition-maxsize", Int.self),
            appendPosition: try number("x-ms-blob-condition-appendpos", Int.self),
            ifTags: try h["x-ms-if-tags"].map { try TagExpression.parse($0, condition: true) },
            tierIfModifiedSince: try date("x-ms-access-tier-if-modified-since"),
            tierIfUnmodifiedSince: try date("x-ms-access-tier-if-unmodified-since"),
            encryption: try BlobEncryption.requested(request, secure: secure, scopes: encryptionScopes))
    }

    /// `headers` with the key hash and scope a block was staged with (Put Block answers so).
    static func encryptionHeaders(_ encryption: BlobEncryption, _ headers: HeaderFields) -> HeaderFields {
        var headers = headers
        if let key = encryption.keySHA256 { headers["x-ms-encryption-key-sha256"] = key }
        if let scope = encryption.scope { headers["x-ms-encryption-scope"] = scope }
        return headers
    }

    /// The conditions of an operation Azure needs the blob's customer key for.
    func keyedConditions(_ request: TransportRequest) throws -> WriteConditions {
        var conditions = try conditions(request)
        conditions.needsCustomerKey = true
        return conditions
    }

    /// The stored HTTP properties a Put Blob or Put Block List sets: `x-ms-blob-*` headers;
    /// the content type falls back to the request's Content-Type, then to octet-stream.
    func httpProperties(_ request: TransportRequest, computedMD5: String?) -> BlobHTTPProperties {
        let h = request.headers
        return BlobHTTPProperties(
            contentType: h["x-ms-blob-content-type"] ?? h["Content-Type"] ?? "application/octet-stream",
            contentMD5: h["x-ms-blob-content-md5"] ?? computedMD5,
            contentEncoding: h["x-ms-blob-content-encoding"] ?? h["Content-Encoding"],
            contentLanguage: h["x-ms-blob-content-language"] ?? h["Content-Language"],
            contentDisposition: h["x-ms-blob-content-disposition"],
            cacheControl: h["x-ms-blob-cache-control"])
    }

    /// ETag, Last-Modified and, for a blob written with versioning on, its version id.
    func blobHeaders(_ record: BlobRecord) -> HeaderFields {
        var headers = HeaderFields([("ETag", record.etag), ("Last-Modified", ServerClock.httpDate(record.modified))])
        if let versionId = record.versionId { headers["x-ms-version-id"] = versionId }
        if let key = record.keySHA256 { headers["x-ms-encryption-key-sha256"] = key }
        if let scope = record.encryptionScope { headers["x-ms-encryption-scope"] = scope }
        return headers
    }

    /// Runs `body` with the request's bytes in the byte store: streamed there by the HTTP
    /// layer (whoever answers the request releases those), or stored now and released here
    /// unless `body` committed them.
    func withUpload<T>(_ request: TransportRequest, _ staged: StagedUpload?, _ body: (StagedUpload) async throws -> T) async throws -> T {
        if let staged { return try await body(staged) }
        let upload = try await StagedUpload.store(request.body, in: store.bytes)
        do {
            let result = try await body(upload)
            await upload.release(from: store.bytes)
            return result
        } catch {
            await upload.release(from: store.bytes)
            throw error
        }
    }

    /// Checks the body's MD5 against a `Content-MD5` header, and its CRC64 against
    /// `x-ms-content-crc64`; returns the MD5.
    func checkTransactionalMD5(_ request: TransportRequest, _ upload: StagedUpload) throws -> String {
        if let problem = Self.checksumProblem(request, upload, md5: "Content-MD5", crc64: "x-ms-content-crc64") { throw problem }
        return upload.md5
    }

    func putBlob(_ container: String, _ blob: String, _ request: TransportRequest, _ staged: StagedUpload?) async throws -> TransportResponse {
        guard let type = request.headers["x-ms-blob-type"] else {
            throw ServiceError(400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: x-ms-blob-type.")
        }
        guard let kind = BlobType(rawValue: type) else { throw ServiceError.invalidHeader("x-ms-blob-type", type) }
        let tier = try writeTier(request)
        if kind != .block { return try await createEmptyBlob(container, blob, request, kind, staged) }
        if request.headers["x-ms-blob-sequence-number"] != nil {
            throw ServiceError.invalidHeader("x-ms-blob-sequence-number", "(a block blob has none)")
        }
        let (record, md5, crc64) = try await withUpload(request, staged) { upload in
            let md5 = try checkTransactionalMD5(request, upload)
            // Put Blob checks the blob's stored MD5 too, when one is given: the whole content is
            // here (a block list commit cannot, and does not).
            if let stored = request.headers["x-ms-blob-content-md5"], stored != md5 {
                throw ServiceError(
                    400, .md5Mismatch, "The MD5 value specified in the request did not match with the MD5 value calculated by the server.")
            }
            let record = try await store.putBlob(
                container: container, name: blob, upload: upload,
                properties: httpProperties(request, computedMD5: md5),
                metadata: try metadataHeaders(request.headers), conditions: try conditions(request), tier: tier,
                tags: try BlobTags.header(request))
            return (record, md5, upload.crc64)
        }
        var headers = blobHeaders(record)
        headers["Content-MD5"] = md5
        headers["x-ms-content-crc64"] = crc64
        headers["x-ms-request-server-encrypted"] = "true"
        return TransportResponse(status: 201, headers: headers)
    }

    func putBlock(_ container: String, _ blob: String, _ request: TransportRequest, _ query: QueryParameters, _ staged: StagedUpload?) async throws
        -> TransportResponse
    {
        guard let id = query["blockid"], let decoded = Data(base64Encoded: id), !decoded.isEmpty, decoded.count <= 64 else {
            throw ServiceError.invalidQuery("blockid", query["blockid"] ?? "")
        }
        // A leased blob's blocks are staged only with its lease id (the commit checks it again).
        try await store.checkLease(container: container, name: blob as String?, given: request.headers["x-ms-lease-id"], write: true)
        let (md5, crc64) = try await withUpload(request, staged) { upload in
            let md5 = try checkTransactionalMD5(request, upload)
            try await store.putBlock(container: container, blob: blob, blockID: id, upload: upload, encryption: try conditions(request).encryption)
            return (md5, upload.crc64)
        }
        return TransportResponse(
            status: 201,
            headers: Self.encryptionHeaders(
                try conditions(request).encryption,
                HeaderFields([("Content-MD5", md5), ("x-ms-content-crc64", crc64), ("x-ms-request-server-encrypted", "true")])))
    }

    /// The tiers of standard accounts, by their canonical names.
    static let tiers = ["Hot", "Cool", "Cold", "Archive", "Smart"]

    /// The `x-ms-access-tier` a request names, canonical; nil when it names none. The premium
    /// page blob tiers (P4…P80) exist only on premium accounts, which this emulator is not.
    static func accessTier(_ request: TransportRequest) throws -> String? {
        guard let asked = request.headers["x-ms-access-tier"] else { return nil }
        if let tier = tiers.first(where: { $0.lowercased() == asked.lowercased() }) { return tier }
        if asked.uppercased().hasPrefix("P"), Int(asked.dropFirst()) != nil {
            throw ServiceError.unsupportedHeader("x-ms-access-tier: \(asked) (premium page blob tiers exist on premium accounts only)")
        }
        throw ServiceError(
            400, .invalidHeaderValue, "The value for one of the HTTP headers is not in the correct format: x-ms-access-tier '\(asked)'.")
    }

    /// `x-ms-rehydrate-priority`: Standard or High, canonical.
    static func rehydratePriority(_ request: TransportRequest) throws -> String? {
        guard let asked = request.headers["x-ms-rehydrate-priority"] else { return nil }
        guard let priority = ["Standard", "High"].first(where: { $0.lowercased() == asked.lowercased() }) else {
            throw ServiceError.invalidHeader("x-ms-rehydrate-priority", asked)
        }
        return priority
    }

    /// A tier named on a write (Put Blob, Put Block List, copies): block blobs only.
    func writeTier(_ request: TransportRequest) throws -> String? {
        guard let tier = try Self.accessTier(request) else { return nil }
        if let type = request.headers["x-ms-blob-type"], type != BlobType.block.rawValue {
            throw ServiceError.invalidHeader("x-ms-access-tier", "\(tier) (a tier is set on block blobs only)")
        }
        return tier
    }

    /// Set Blob Tier: Hot, Cool, Cold and Smart at once (200); Archive at once; out of Archive
    /// by a rehydration (202) that completes after the emulator's rehydration time
    /// (`--rehydrate-seconds` at Standard priority, a tenth of it at High).
    func setBlobTier(_ container: String, _ blob: String, _ request: TransportRequest, versionId: String? = nil) async throws
        -> TransportResponse
    {
        guard let tier = try Self.accessTier(request) else {
            throw ServiceError(400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: x-ms-access-tier.")
        }
        if let versionId, try await store.setVersionTier(container: container, name: blob, versionId: versionId, tier: tier) {
            return TransportResponse(status: 200)
        }
        let status = try await store.setBlobTier(
            container: container, name: blob, tier: tier, priority: try Self.rehydratePriority(request),
            leaseID: request.headers["x-ms-lease-id"], ifTags: try conditions(request).ifTags,
            times: EmulatorStore.RehydrationTimes(standardSeconds: rehydrationSeconds))
        return TransportResponse(status: status)
    }

    func putBlockList(_ container: String, _ blob: String, _ request: TransportRequest) async throws -> TransportResponse {
        guard let list = BlockListParser.parse(request.body) else {
            throw ServiceError(400, .invalidXmlDocument, "XML specified is not syntactically valid.")
        }
        // Azure's limit (a blob has at most 50,000 committed blocks), checked before any work:
        // a longer list made one request cost minutes.
        guard list.count <= EmulatorStore.maxAppendBlocks else {
            throw ServiceError(400, .blockListTooLong, "The block list may not contain more than 50,000 blocks.")
        }
        // Like Azure, a block list commit computes no MD5 of its own: only x-ms-blob-content-md5 sets one.
        let record = try await store.putBlockList(
            container: container, name: blob, list: list,
            properties: httpProperties(request, computedMD5: nil),
            metadata: try metadataHeaders(request.headers), conditions: try conditions(request), tier: try writeTier(request),
            tags: try BlobTags.header(request), maxSize: maxCommittedBlobBytes, tooLarge: committedTooLarge)
        var headers = blobHeaders(record)
        headers["x-ms-request-server-encrypted"] = "true"
        return TransportResponse(status: 201, headers: headers)
    }

    func getBlockList(
        _ container: String, _ blob: String, _ request: TransportRequest, _ query: QueryParameters, snapshot: String? = nil,
        versionId: String? = nil
    ) async throws -> TransportResponse {
        let kind = query["blocklisttype"] ?? "committed"
        guard ["committed", "uncommitted", "all"].contains(kind) else { throw ServiceError.invalidQuery("blocklisttype", kind) }
        var (record, staged) = try await store.blockList(container: container, name: blob)
        if snapshot != nil || versionId != nil {
            // A snapshot or version has its committed blocks and none staged.
            let (containerRecord, found) = try await store.blob(container, blob, snapshot: snapshot, versionId: versionId)
            guard containerRecord != nil else { throw EmulatorStore.containerNotFound }
            guard let found else { throw EmulatorStore.blobNotFound }
            (record, staged) = (found, [])
        }
        if let record, record.type != .block { throw EmulatorStore.invalidBlobType }
        guard record != nil || !staged.isEmpty else { throw EmulatorStore.blobNotFound }
        // `x-ms-if-tags` on the committed blob (blocks only staged have no tags to meet it).
        if let ifTags = try conditions(request).ifTags {
            guard let record, ifTags.matches(record.tags, container: container) else { throw WriteConditions.notMet }
        }
        var xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>"
        func blocks(_ tag: String, _ list: [CommittedBlock]) {
            xml += "<\(tag)>" + list.map { "<Block><Name>\(XMLEscape.text($0.id))</Name><Size>\($0.size)</Size></Block>" }.joined() + "</\(tag)>"
        }
        if kind != "uncommitted" { blocks("CommittedBlocks", record?.blocks ?? []) }
        if kind != "committed" { blocks("UncommittedBlocks", staged) }
        xml += "</BlockList>"
        var headers = record.map(blobHeaders) ?? HeaderFields()
        headers["Content-Type"] = "application/xml"
        headers["x-ms-blob-content-length"] = String(record?.size ?? 0)
        return TransportResponse(status: 200, headers: headers, body: Data(xml.utf8))
    }

    func setBlobProperties(_ container: String, _ blob: String, _ request: TransportRequest) async throws -> TransportResponse {
        if let changed = try await changePageBlob(container, blob, request) { return changed }
        let h = request.headers
        // Set Blob Properties replaces every HTTP property; one not sent is cleared.
        let properties = BlobHTTPProperties(
            contentType: h["x-ms-blob-content-type"] ?? "application/octet-stream",
            contentMD5: h["x-ms-blob-content-md5"], contentEncoding: h["x-ms-blob-content-encoding"],
            contentLanguage: h["x-ms-blob-content-language"],
            contentDisposition: h["x-ms-blob-content-disposition"], cacheControl: h["x-ms-blob-cache-control"])
        let record = try await store.updateBlob(
            container: container, name: blob, properties: properties, metadata: nil, conditions: try conditions(request))
        return TransportResponse(status: 200, headers: blobHeaders(record))
    }

    func setBlobMetadata(_ container: String, _ blob: String, _ request: TransportRequest) async throws -> TransportResponse {
        let metadata = try metadataHeaders(request.headers)
        let record =
            store.versioning
            ? try await store.setMetadataKeepingVersion(
                container: container, name: blob, metadata: metadata, conditions: try keyedConditions(request))
            : try await store.updateBlob(
                container: container, name: blob, properties: nil, metadata: metadata, conditions: try keyedConditions(request))
        return TransportResponse(status: 200, headers: blobHeaders(record))
    }

    func deleteBlob(_ container: String, _ blob: String, _ request: TransportRequest) async throws -> TransportResponse {
        if request.query.contains(where: { $0.name == "deletetype" }) {
            throw ServiceError(
                400, .invalidQueryParameterValue,
                "Value for one of the query parameters specified in the request URI is invalid: deletetype=permanent deletes a soft-deleted snapshot or version (?snapshot= or ?versionid=)."
            )
        }
        try await store.deleteBlob(
            container: container, name: blob, conditions: try conditions(request), snapshots: try Self.snapshotDeletion(request))
        return TransportResponse(status: 202)
    }

    /// `deletetype=permanent` (Delete Blob of a snapshot or version); any other value is refused.
    static func permanentDelete(_ query: QueryParameters) throws -> Bool {
        guard let value = query["deletetype"] else { return false }
        guard value == "permanent" else { throw ServiceError.invalidQuery("deletetype", value) }
        return true
    }

    /// Undelete Blob (`comp=undelete`): 200, the soft-deleted blob and its states live again.
    func undeleteBlob(_ container: String, _ blob: String) async throws -> TransportResponse {
        try await store.undelete(container: container, name: blob)
        return TransportResponse(status: 200)
    }

    /// `bytes=a-b` or `bytes=a-` from `x-ms-range` (preferred) or `Range`; nil when absent or unreadable.
    static func range(_ request: TransportRequest) -> (start: Int, end: Int?)? {
        guard let text = request.headers["x-ms-range"] ?? request.headers["Range"] else { return nil }
        return byteRange(text)
    }

    /// Get Blob and Get Blob Properties. The bytes are not read here: the reply carries the
    /// open blob, and the HTTP layer streams it out in pieces (a range MD5, at most 4 MiB, is
    /// the exception: it needs the bytes first).
    func getBlob(
        _ container: String, _ blob: String, _ request: TransportRequest, head: Bool, snapshot: String? = nil, versionId: String? = nil,
        tagCount: Bool = true
    ) async throws -> BlobReply {
        let (containerRecord, found) = try await store.blob(container, blob, snapshot: snapshot, versionId: versionId)
        guard containerRecord != nil else { throw EmulatorStore.containerNotFound }
        guard var record = found else { throw EmulatorStore.blobNotFound }
        if !head && record.isArchived { throw EmulatorStore.blobArchived }
        // An incremental copy's destination is read through its snapshots, never itself.
        if !head { try Self.refuseIncrementalCopyRead(record) }
        let asked = try conditions(request)
        try asked.checkTags(record)
        try BlobEncryption.checkKey(asked.encryption.keySHA256, for: record)
        // A snapshot has no lease of its own; the blob's does not guard reads of its snapshots.
        var (lease, now) = try await store.lease(container: container, name: blob)
        if record.retired != nil { lease = nil }
        try BlobLease.check(lease, given: request.headers["x-ms-lease-id"], write: false, at: now)
        // Opened before the conditions and the range are worked out: a concurrent overwrite
        // may swap the record, and what is checked must be what is sent.
        var reader: (any ByteReader)?
        if !head { (record, reader) = try await store.openBlob(record) }
        if let ifNoneMatch = request.headers["If-None-Match"], ifNoneMatch == "*" || ifNoneMatch == record.etag {
            reader?.close()
            var headers = blobHeaders(record)
            headers["x-ms-error-code"] = AzureStorageError.Code.conditionNotMet.rawValue  // as Azure sends it, so SDKs raise with a code
            return BlobReply(TransportResponse(status: 304, headers: headers))
        }
        if let ifMatch = request.headers["If-Match"], ifMatch != "*", ifMatch != record.etag {
            reader?.close()
            throw ServiceError(412, .conditionNotMet, "The condition specified using HTTP conditional header(s) is not met.")
        }
        // HTTP dates have whole seconds: the blob's time is compared at that resolution.
        let modified = record.modified.unixSeconds
        if let text = request.headers["If-Modified-Since"], let since = ServerClock.parseHTTPDate(text),
            modified <= Int64(since.timeIntervalSince1970)
        {
            reader?.close()
            var headers = blobHeaders(record)
            headers["x-ms-error-code"] = AzureStorageError.Code.conditionNotMet.rawValue
            return BlobReply(TransportResponse(status: 304, headers: headers))
        }
        if let text = request.headers["If-Unmodified-Since"], let since = ServerClock.parseHTTPDate(text),
            modified > Int64(since.timeIntervalSince1970)
        {
            reader?.close()
            throw ServiceError(412, .conditionNotMet, "The condition specified using HTTP conditional header(s) is not met.")
        }
        var status = 200
        var offset = 0
        var length = record.size
        var rangeMD5 = false
        if !head, let range = Self.range(request) {
            guard range.start < record.size else {
                throw ServiceError(
                    416, .invalidRange, "The range specified is invalid for the current size of the resource.",
                    headers: [("Content-Range", "bytes */\(record.size)")])
            }
            offset = range.start
            length = min(range.end ?? (record.size - 1), record.size - 1) - offset + 1
            status = 206
            rangeMD5 = request.headers["x-ms-range-get-content-md5"] == "true"
            if rangeMD5 && length > 4 << 20 {
                throw ServiceError(400, .outOfRangeInput, "x-ms-range-get-content-md5 is allowed only for ranges of at most 4 MiB.")
            }
        }
        var body = Data()
        if rangeMD5, let open = reader {
            let (start, count) = (offset, length)
            body = try await BlockingPool.run { try open.read(offset: start, length: count) }
            open.close()
            reader = nil
        }
        var headers = blobHeaders(record)
        headers["Content-Length"] = String(length)
        headers["Content-Type"] = record.properties.contentType
        if status == 206 {
            headers["Content-Range"] = "bytes \(offset)-\(offset + length - 1)/\(record.size)"
            if let md5 = record.properties.contentMD5 { headers["x-ms-blob-content-md5"] = md5 }
            if rangeMD5 { headers["Content-MD5"] = Self.md5(body) }
        } else if let md5 = record.properties.contentMD5 {
            headers["Content-MD5"] = md5
        }
        if let v = record.properties.contentEncoding { headers["Content-Encoding"] = v }
        if let v = record.properties.contentLanguage { headers["Content-Language"] = v }
        if let v = record.properties.contentDisposition { headers["Content-Disposition"] = v }
        if let v = record.properties.cacheControl { headers["Cache-Control"] = v }
        for (n, v) in record.metadata { headers["x-ms-meta-" + n] = v }
        if tagCount && !record.tags.pairs.isEmpty { headers["x-ms-tag-count"] = String(record.tags.pairs.count) }
        headers["Accept-Ranges"] = "bytes"
        for (name, value) in Self.typeHeaders(record) { headers[name] = value }
        headers["x-ms-creation-time"] = ServerClock.httpDate(record.created)
        for (name, value) in BlobLease.headers(lease, at: now) { headers[name] = value }
        headers["x-ms-server-encrypted"] = "true"
        if record.versionId != nil { headers["x-ms-is-current-version"] = record.retired == nil ? "true" : "false" }
        if let copy = record.copy {
            headers["x-ms-copy-id"] = copy.id
            headers["x-ms-copy-source"] = copy.source
            headers["x-ms-copy-status"] = copy.status
            headers["x-ms-copy-progress"] = copy.status == "success" ? "\(copy.bytes)/\(copy.bytes)" : "0/\(copy.bytes)"
            if copy.status == "success" { headers["x-ms-copy-completion-time"] = ServerClock.httpDate(copy.completed) }
            if copy.incremental {
                headers["x-ms-incremental-copy"] = "true"
                if let snapshot = copy.destinationSnapshot { headers["x-ms-copy-destination-snapshot"] = snapshot }
            }
        }
        // Current versions answer a block blob's tier on Get Blob as on Get Blob Properties.
        if record.type == .block {
            headers["x-ms-access-tier"] = record.tier ?? "Hot"
            if let smart = record.smartAccessTier { headers["x-ms-smart-access-tier"] = smart }
            headers["x-ms-access-tier-inferred"] = record.tier == nil ? "true" : "false"
            if let status = record.archiveStatus { headers["x-ms-archive-status"] = status }
            if let priority = record.rehydratePriority { headers["x-ms-rehydrate-priority"] = priority }
            if let changed = record.tierChanged { headers["x-ms-access-tier-change-time"] = ServerClock.httpDate(changed) }
        }
        // `x-ms-structured-body`: the bytes go out as a structured message, CRC64 per segment.
        var structured = false
        if !head, let asked = request.headers["x-ms-structured-body"] {
            guard asked == StructuredMessage.headerValue else {
                reader?.close()
                throw ServiceError.invalidHeader("x-ms-structured-body", asked)
            }
            structured = true
            headers["x-ms-structured-body"] = asked
            headers["x-ms-structured-content-length"] = String(length)
            headers["Content-Length"] = String(StructuredMessage.encodedLength(contentLength: length))
            if reader == nil {
                var encoder = StructuredMessage.Encoder(contentLength: length)
                body = encoder.start() + encoder.encode(body) + encoder.close()
            }
        }
        let response = TransportResponse(status: status, headers: headers, body: body)
        guard let reader else { return BlobReply(response) }
        return BlobReply(response, body: BlobBody(reader: reader, offset: offset, length: length, structured: structured))
    }
}
