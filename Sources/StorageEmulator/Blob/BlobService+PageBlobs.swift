import Foundation
import StorageProtocol

/// Page blobs and append blobs: creating them (Put Blob with their type), Put Page, Clear
/// Pages, Get Page Ranges, Resize and Update Sequence Number; Append Block and Seal.
extension BlobService {
    /// The headers that say what kind of blob a response is about.
    static func typeHeaders(_ record: BlobRecord) -> [(String, String)] {
        var headers = [("x-ms-blob-type", record.type.rawValue)]
        switch record.type {
        case .page: headers.append(("x-ms-blob-sequence-number", String(record.sequenceNumber)))
        case .append:
            headers.append(("x-ms-blob-committed-block-count", String(record.appendCount)))
            if record.sealed { headers.append(("x-ms-blob-sealed", "true")) }
        case .block: break
        }
        return headers
    }

    /// Put Blob of a page or an append blob: an empty blob, no body.
    func createEmptyBlob(_ container: String, _ blob: String, _ request: TransportRequest, _ kind: BlobType, _ staged: StagedUpload?) async throws
        -> TransportResponse
    {
        guard (staged?.size ?? request.body.count) == 0 else {
            throw ServiceError(400, .invalidHeaderValue, "A Put Blob of a \(kind.rawValue) carries no body; send Content-Length: 0.")
        }
        var size = 0
        var sequenceNumber: Int64 = 0
        if kind == .page {
            guard let text = request.headers["x-ms-blob-content-length"] else {
                throw ServiceError(
                    400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: x-ms-blob-content-length.")
            }
            size = try Self.pageBlobSize(text)
            if let text = request.headers["x-ms-blob-sequence-number"] {
                guard let number = Int64(text), number >= 0 else { throw ServiceError.invalidHeader("x-ms-blob-sequence-number", text) }
                sequenceNumber = number
            }
        } else if let text = request.headers["x-ms-blob-sequence-number"] {
            throw ServiceError.invalidHeader("x-ms-blob-sequence-number", text)
        }
        let properties = httpProperties(request, computedMD5: nil)
        let metadata = try metadataHeaders(request.headers)
        let conditions = try conditions(request)
        let tags = try BlobTags.header(request)
        let record = try await withUpload(request, staged) { upload in
            // An append blob's bytes start as this empty object; a page blob has none until written.
            let record = try await store.commitBlob(
                container: container, name: blob, dataID: kind == .append ? upload.id : "", size: size, blocks: [],
                properties: properties, metadata: metadata, conditions: conditions, type: kind, sequenceNumber: sequenceNumber,
                tags: tags)
            if kind == .append { upload.claim() }
            return record
        }
        var headers = blobHeaders(record)
        headers["x-ms-request-server-encrypted"] = "true"
        return TransportResponse(status: 201, headers: headers)
    }

    /// A page blob's length: a multiple of 512, at most 8 TiB.
    static func pageBlobSize(_ text: String) throws -> Int {
        guard let size = Int(text), size >= 0, size % PageExtents.pageSize == 0, size <= PageExtents.maxSize else {
            throw ServiceError(
                400, .invalidHeaderValue,
                "The value for one of the HTTP headers is not in the correct format: x-ms-blob-content-length '\(text)' (a page blob's length is a multiple of 512, at most 8 TiB)."
            )
        }
        return size
    }

    /// The page range a Put Page, Clear Pages or Put Page From URL names (`x-ms-range`, else
    /// `Range`): whole 512-byte pages.
    static func pageRange(_ request: TransportRequest) throws -> (start: Int, end: Int) {
        guard let text = request.headers["x-ms-range"] ?? request.headers["Range"] else {
            throw ServiceError(400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: x-ms-range.")
        }
        guard let range = byteRange(text), let last = range.end, range.start % PageExtents.pageSize == 0,
            (last + 1) % PageExtents.pageSize == 0
        else {
            throw ServiceError(416, .invalidPageRange, "The page range specified is invalid: \(text) is not whole 512-byte pages.")
        }
        return (range.start, last + 1)
    }

    /// Put Page (`x-ms-page-write: update`) and Clear Pages (`clear`).
    func putPage(_ container: String, _ blob: String, _ request: TransportRequest, _ staged: StagedUpload?) async throws -> TransportResponse {
        let (start, end) = try Self.pageRange(request)
        let conditions = try keyedConditions(request)
        let record: BlobRecord
        var headers = HeaderFields()
        switch request.headers["x-ms-page-write"]?.lowercased() {
        case "update":
            record = try await withUpload(request, staged) { upload in
                guard upload.size == end - start else {
                    throw ServiceError(
                        400, .invalidHeaderValue,
                        "The value for one of the HTTP headers is not in the correct format: Content-Length \(upload.size) is not the length of the range (\(end - start))."
                    )
                }
                guard upload.size <= 4 << 20 else { throw ServiceError(413, .requestBodyTooLarge, "A Put Page writes at most 4 MiB.") }
                headers["Content-MD5"] = try checkTransactionalMD5(request, upload)
                headers["x-ms-content-crc64"] = upload.crc64
                return try await store.writePages(container: container, name: blob, start: start, end: end, upload: upload, conditions: conditions)
            }
            headers["x-ms-request-server-encrypted"] = "true"
        case "clear":
            guard (staged?.size ?? request.body.count) == 0 else {
                throw ServiceError(400, .invalidHeaderValue, "Clear Pages carries no body; send Content-Length: 0.")
            }
            record = try await store.writePages(container: container, name: blob, start: start, end: end, upload: nil, conditions: conditions)
        case let other:
            guard let other else {
                throw ServiceError(400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: x-ms-page-write.")
            }
            throw ServiceError.invalidHeader("x-ms-page-write", other)
        }
        for (name, value) in blobHeaders(record).fields { headers[name] = value }
        headers["x-ms-blob-sequence-number"] = String(record.sequenceNumber)
        return TransportResponse(status: 201, headers: headers)
    }

    /// Put Page From URL: `x-ms-source-range` of the source written at `x-ms-range`.
    func putPageFromURL(_ container: String, _ blob: String, _ request: TransportRequest, access: CopySourceAccess) async throws -> TransportResponse
    {
        try refuseUnsupportedCopyHeaders(request)
        let (start, end) = try Self.pageRange(request)
        guard request.headers["x-ms-page-write"]?.lowercased() == "update" else {
            throw ServiceError.invalidHeader("x-ms-page-write", request.headers["x-ms-page-write"] ?? "")
        }
        guard let text = request.headers["x-ms-source-range"], let range = Self.byteRange(text), let last = range.end,
            last - range.start + 1 == end - start
        else {
            throw ServiceError(
                400, .invalidHeaderValue, "x-ms-source-range must name as many bytes as x-ms-range (\(end - start)).")
        }
        let conditions = try keyedConditions(request)
        let (_, source) = try await copySource(request, access: access)
        let upload = try await copyBytes(from: source, range: range, maxBytes: end - start, request).upload
        guard upload.size == end - start else {
            await upload.release(from: store.bytes)
            throw ServiceError(416, .invalidRange, "The source range is beyond the end of the source.")
        }
        if let problem = Self.sourceChecksumProblem(request, upload) {
            await upload.release(from: store.bytes)
            throw problem
        }
        let record = try await store.writePages(container: container, name: blob, start: start, end: end, upload: upload, conditions: conditions)
        var headers = blobHeaders(record)
        headers["Content-MD5"] = upload.md5
        headers["x-ms-content-crc64"] = upload.crc64
        headers["x-ms-blob-sequence-number"] = String(record.sequenceNumber)
        headers["x-ms-request-server-encrypted"] = "true"
        return TransportResponse(status: 201, headers: headers)
    }

    /// Get Page Ranges: the written ranges, adjacent ones joined, within `x-ms-range` if
    /// given; `maxresults` and `marker` page through them.
    func getPageRanges(_ container: String, _ blob: String, _ request: TransportRequest, _ query: QueryParameters, snapshot: String? = nil)
        async throws -> TransportResponse
    {
        if request.headers["x-ms-previous-snapshot-url"] != nil {
            throw ServiceError.unsupportedHeader("x-ms-previous-snapshot-url (managed disk diffs)")
        }
        let record: BlobRecord
        var extents: [PageExtent] = []
        var diff: (ranges: [(start: Int, end: Int)], cleared: [(start: Int, end: Int)])?
        if let previous = query["prevsnapshot"] {
            try Self.checkSnapshot(previous)
            let found = try await store.pageDiffExtents(container: container, name: blob, snapshot: snapshot, previous: previous)
            record = found.0
            diff = PageExtents.diff(current: found.current, previous: found.previous)
        } else if let snapshot {
            let (containerRecord, found) = try await store.blob(container, blob, snapshot: snapshot)
            guard containerRecord != nil else { throw EmulatorStore.containerNotFound }
            guard let found else { throw EmulatorStore.blobNotFound }
            guard found.type == .page else { throw EmulatorStore.invalidBlobType }
            record = found
            extents = try await store.snapshotExtents(container: container, name: blob, snapshot: snapshot)
        } else {
            (record, extents) = try await store.pageRanges(container: container, name: blob)
        }
        if snapshot == nil {
            try Self.refuseIncrementalCopyRead(record)
            let (lease, now) = try await store.lease(container: container, name: blob)
            try BlobLease.check(lease, given: request.headers["x-ms-lease-id"], write: false, at: now)
        }
        try conditions(request).checkETagAndTime(etag: record.etag, modified: record.modified, exists: true) { WriteConditions.notMet }
        var lower = 0
        var upper = Int.max
        if let text = request.headers["x-ms-range"] ?? request.headers["Range"] {
            guard let range = Self.byteRange(text) else { throw ServiceError(416, .invalidRange, "The range specified is invalid: \(text).") }
            lower = range.start
            upper = range.end.map { $0 + 1 } ?? Int.max
        }
        if let marker = query["marker"] {
            guard let from = Int(marker), from >= 0 else { throw ServiceError.invalidQuery("marker", marker) }
            lower = max(lower, from)
        }
        upper = min(upper, record.size)  // cleared extents past a shrunk blob's end are not its pages
        func clip(_ list: [(start: Int, end: Int)]) -> [(start: Int, end: Int)] {
            list.compactMap { r in
                let s = max(r.start, lower)
                let e = min(r.end, upper - 1)
                return s <= e ? (s, e) : nil
            }
        }
        // Ranges and cleared ranges in one list by start, each marked.
        var all: [(start: Int, end: Int, cleared: Bool)]
        if let diff {
            all = (clip(diff.ranges).map { ($0.start, $0.end, false) } + clip(diff.cleared).map { ($0.start, $0.end, true) })
                .sorted { $0.start < $1.start }
        } else {
            all = PageExtents.ranges(extents, from: lower, to: upper).map { ($0.start, $0.end, false) }
        }
        var next: String?
        if let text = query["maxresults"] {
            guard let limit = Int(text), limit > 0 else { throw ServiceError.invalidQuery("maxresults", text) }
            if all.count > limit {
                next = String(all[limit].start)
                all = Array(all.prefix(limit))
            }
        }
        var xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><PageList>"
        xml += all.map {
            let tag = $0.cleared ? "ClearRange" : "PageRange"
            return "<\(tag)><Start>\($0.start)</Start><End>\($0.end)</End></\(tag)>"
        }.joined()
        if let next { xml += "<NextMarker>\(next)</NextMarker>" }
        xml += "</PageList>"
        var headers = blobHeaders(record)
        headers["Content-Type"] = "application/xml"
        headers["x-ms-blob-content-length"] = String(record.size)
        return TransportResponse(status: 200, headers: headers, body: Data(xml.utf8))
    }

    /// Resize (`x-ms-blob-content-length`) and Update Sequence Number
    /// (`x-ms-sequence-number-action`), which Azure serves at Set Blob Properties' URL; nil
    /// when the request is neither.
    func changePageBlob(_ container: String, _ blob: String, _ request: TransportRequest) async throws -> TransportResponse? {
        let h = request.headers
        guard h["x-ms-blob-content-length"] != nil || h["x-ms-sequence-number-action"] != nil else { return nil }
        let size = try h["x-ms-blob-content-length"].map(Self.pageBlobSize)
        var action: EmulatorStore.SequenceNumberAction?
        if let text = h["x-ms-sequence-number-action"] {
            let given = h["x-ms-blob-sequence-number"]
            let number = try given.map { text -> Int64 in
                guard let n = Int64(text), n >= 0 else { throw ServiceError.invalidHeader("x-ms-blob-sequence-number", text) }
                return n
            }
            switch (text.lowercased(), number) {
            case ("max", let n?): action = .max(n)
            case ("update", let n?): action = .update(n)
            case ("increment", nil): action = .increment
            case ("increment", _?):
                throw ServiceError.invalidHeader("x-ms-blob-sequence-number", "\(given ?? "") (increment takes none)")
            case ("max", nil), ("update", nil):
                throw ServiceError(
                    400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: x-ms-blob-sequence-number.")
            default: throw ServiceError.invalidHeader("x-ms-sequence-number-action", text)
            }
        }
        let record = try await store.changePageBlob(container: container, name: blob, size: size, action: action, conditions: try conditions(request))
        var headers = blobHeaders(record)
        headers["x-ms-blob-sequence-number"] = String(record.sequenceNumber)
        return TransportResponse(status: 200, headers: headers)
    }

    /// Append Block: the body appended at the blob's end.
    func appendBlock(_ container: String, _ blob: String, _ request: TransportRequest, _ staged: StagedUpload?) async throws -> TransportResponse {
        let conditions = try keyedConditions(request)
        let (record, offset, md5, crc64) = try await withUpload(request, staged) { upload in
            guard upload.size <= Self.maxAppendBytes else {
                throw ServiceError(413, .requestBodyTooLarge, "An Append Block carries at most 100 MiB.")
            }
            let md5 = try checkTransactionalMD5(request, upload)
            let (record, offset) = try await store.appendBlock(
                container: container, name: blob, upload: upload, conditions: conditions, maxSize: maxCommittedBlobBytes, tooLarge: appendTooLarge)
            return (record, offset, md5, upload.crc64)
        }
        return appendReply(record, offset: offset, md5: md5, crc64: crc64)
    }

    /// The answer when a block list would commit a blob past the largest one committed here.
    var committedTooLarge: @Sendable (Int) -> ServiceError {
        let (limit, names) = (maxCommittedBlobBytes, remote.names)
        return { size in
            ServiceError(
                413, .requestBodyTooLarge,
                ("A blob committed here holds at most \(limit) bytes (\(Setting.maxCommittedBlobSize)): this block list would make it \(size)."
                    as Phrase).rendered(names))
        }
    }

    /// The answer when an append would grow the blob past the largest one committed here (an
    /// append blob is made of its blocks as a block blob is).
    var appendTooLarge: @Sendable (Int) -> ServiceError {
        let (limit, names) = (maxCommittedBlobBytes, remote.names)
        return { size in
            ServiceError(
                413, .requestBodyTooLarge,
                ("An append blob here holds at most \(limit) bytes (\(Setting.maxCommittedBlobSize)): this block would make it \(size)."
                    as Phrase).rendered(names))
        }
    }

    /// The most one Append Block carries (service version 2022-11-02 on).
    static let maxAppendBytes = 100 << 20

    private func appendReply(_ record: BlobRecord, offset: Int, md5: String, crc64: String) -> TransportResponse {
        var headers = blobHeaders(record)
        headers["Content-MD5"] = md5
        headers["x-ms-content-crc64"] = crc64
        headers["x-ms-blob-append-offset"] = String(offset)
        headers["x-ms-blob-committed-block-count"] = String(record.appendCount)
        headers["x-ms-request-server-encrypted"] = "true"
        return TransportResponse(status: 201, headers: headers)
    }

    /// Append Block From URL: `x-ms-source-range` of the source (else all of it) appended.
    func appendBlockFromURL(_ container: String, _ blob: String, _ request: TransportRequest, access: CopySourceAccess) async throws
        -> TransportResponse
    {
        try refuseUnsupportedCopyHeaders(request)
        let conditions = try keyedConditions(request)
        var range: (start: Int, end: Int?)?
        if let text = request.headers["x-ms-source-range"] {
            guard let parsed = Self.byteRange(text) else {
                throw ServiceError(416, .invalidRange, "The range specified is invalid for the current size of the resource.")
            }
            range = parsed
        }
        let (_, source) = try await copySource(request, access: access)
        let upload = try await copyBytes(from: source, range: range, maxBytes: min(Self.maxAppendBytes, maxBlobBytes), request).upload
        do {
            if let problem = Self.sourceChecksumProblem(request, upload) { throw problem }
            let (record, offset) = try await store.appendBlock(
                container: container, name: blob, upload: upload, conditions: conditions, maxSize: maxCommittedBlobBytes, tooLarge: appendTooLarge)
            await upload.release(from: store.bytes)
            return appendReply(record, offset: offset, md5: upload.md5, crc64: upload.crc64)
        } catch {
            await upload.release(from: store.bytes)
            throw error
        }
    }

    /// Append Blob Seal.
    func sealBlob(_ container: String, _ blob: String, _ request: TransportRequest) async throws -> TransportResponse {
        let record = try await store.sealBlob(container: container, name: blob, conditions: try conditions(request))
        var headers = blobHeaders(record)
        headers["x-ms-blob-sealed"] = "true"
        return TransportResponse(status: 200, headers: headers)
    }
}
