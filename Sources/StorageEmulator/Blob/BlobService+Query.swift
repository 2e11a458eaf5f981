import Foundation
import StorageProtocol

extension BlobService {
    /// Query Blob Contents (`POST ?comp=query`): the request body is read and checked before
    /// the blob is opened; the answer streams as the blob is read (``QueryRun``). Conditions,
    /// leases, index tags and customer keys are checked as for Get Blob; a failed ETag or time
    /// condition is 412 (a POST has no 304).
    func queryBlob(_ container: String, _ blob: String, _ request: TransportRequest, snapshot: String? = nil, versionId: String? = nil)
        async throws -> BlobReply
    {
        let query: QueryRequest
        do {
            query = try QueryRequest.parse(request.body)
        } catch {
            throw ServiceError(
                400, .invalidXmlNodeValue,
                "The value for one of the XML nodes is not in the correct format: \(error.element): \(error.reason).")
        }
        let (containerRecord, found) = try await store.blob(container, blob, snapshot: snapshot, versionId: versionId)
        guard containerRecord != nil else { throw EmulatorStore.containerNotFound }
        guard let existing = found else { throw EmulatorStore.blobNotFound }
        if existing.isArchived { throw EmulatorStore.blobArchived }
        try Self.refuseIncrementalCopyRead(existing)
        let asked = try conditions(request)
        try asked.checkTags(existing)
        try BlobEncryption.checkKey(asked.encryption.keySHA256, for: existing)
        var (lease, now) = try await store.lease(container: container, name: blob)
        if existing.retired != nil { lease = nil }
        try BlobLease.check(lease, given: request.headers["x-ms-lease-id"], write: false, at: now)
        // Opened before the conditions are checked: what is checked is what is queried.
        let (record, reader) = try await store.openBlob(existing)
        do {
            try asked.checkETagAndTime(etag: record.etag, modified: record.modified, exists: true) { WriteConditions.notMet }
        } catch {
            reader.close()
            throw error
        }
        var headers = blobHeaders(record)
        headers["Content-Type"] = "avro/binary"
        headers["Accept-Ranges"] = "bytes"
        for (n, v) in record.metadata { headers["x-ms-meta-" + n] = v }
        for (name, value) in Self.typeHeaders(record) { headers[name] = value }
        headers["x-ms-creation-time"] = ServerClock.httpDate(record.created)
        for (name, value) in BlobLease.headers(lease, at: now) { headers[name] = value }
        if let md5 = record.properties.contentMD5 { headers["x-ms-blob-content-md5"] = md5 }
        headers["x-ms-server-encrypted"] = "true"
        let response = TransportResponse(status: 200, headers: headers)
        return BlobReply(response, body: BlobBody(reader: reader, offset: 0, length: record.size, query: query))
    }
}
