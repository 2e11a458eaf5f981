import Foundation
import StorageProtocol

/// Set Blob Tags, Get Blob Tags and Find Blobs by Tags.
extension BlobService {
    func setBlobTags(_ container: String, _ blob: String, _ request: TransportRequest, versionId: String? = nil) async throws
        -> TransportResponse
    {
        let tags = try BlobTags(xml: request.body)
        if let versionId, try await store.setVersionTags(container: container, name: blob, versionId: versionId, tags: tags) {
            return TransportResponse(status: 204)
        }
        try await store.setTags(container: container, name: blob, tags: tags, conditions: try tagConditions(request))
        return TransportResponse(status: 204)
    }

    func getBlobTags(_ container: String, _ blob: String, _ request: TransportRequest, snapshot: String? = nil, versionId: String? = nil)
        async throws -> TransportResponse
    {
        let (containerRecord, found) = try await store.blob(container, blob, snapshot: snapshot, versionId: versionId)
        guard containerRecord != nil else { throw EmulatorStore.containerNotFound }
        guard let record = found else { throw EmulatorStore.blobNotFound }
        if record.retired == nil {
            let (lease, now) = try await store.lease(container: container, name: blob)
            try BlobLease.check(lease, given: request.headers["x-ms-lease-id"], write: false, at: now)
        }
        let conditions = try tagConditions(request)
        try conditions.checkETagAndTime(etag: record.etag, modified: record.modified, exists: true) { WriteConditions.notMet }
        try conditions.checkTags(record)
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?>" + record.tags.xml
        return TransportResponse(status: 200, headers: HeaderFields([("Content-Type", "application/xml")]), body: Data(body.utf8))
    }

    /// The conditions of Set and Get Blob Tags: on the blob's ETag and time they are sent as
    /// `x-ms-blob-if-match`, `-if-none-match`, `-if-modified-since`, `-if-unmodified-since`
    /// (service version 2026-02-06), beside `x-ms-if-tags` and the lease.
    func tagConditions(_ request: TransportRequest) throws -> WriteConditions {
        var conditions = try conditions(request)
        let h = request.headers
        if let value = h["x-ms-blob-if-match"] { conditions.ifMatch = value }
        if let value = h["x-ms-blob-if-none-match"] { conditions.ifNoneMatch = value }
        if let value = try Self.dateHeader(h, "x-ms-blob-if-modified-since") { conditions.ifModifiedSince = value }
        if let value = try Self.dateHeader(h, "x-ms-blob-if-unmodified-since") { conditions.ifUnmodifiedSince = value }
        return conditions
    }

    /// Find Blobs by Tags, on the account (`container` nil) or one container: the blobs whose
    /// tags satisfy `where`, each with the tags the expression names.
    func findBlobsByTags(_ container: String?, _ request: TransportRequest, _ query: QueryParameters) async throws -> TransportResponse {
        guard let text = query["where"] else {
            throw ServiceError(400, .missingRequiredQueryParameter, "A query parameter that's mandatory for this request is not specified: where.")
        }
        let expression = try TagExpression.parse(text, condition: false)
        let limit = try maxResults(query)
        var marker: (String, String)?
        if let text = query["marker"].map(XMLEscape.marker) {
            let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw ServiceError.invalidQuery("marker", text) }
            marker = (String(parts[0]), String(parts[1]))
        }
        if let container, try await store.container(container) == nil { throw EmulatorStore.containerNotFound }
        let (records, next) = try await store.findBlobs(in: container, matching: expression, after: marker, limit: limit)
        let keys = expression.keys
        var xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"\(XMLEscape.text(serviceEndpoint(request)))\">"
        xml += XMLEscape.element("Where", text) + "<Blobs>"
        for record in records {
            let shown = BlobTags.unchecked(record.tags.pairs.filter { pair in keys.contains { $0.isExactly(pair.0) } })
            xml += "<Blob>" + XMLEscape.name(record.name) + XMLEscape.element("ContainerName", record.container) + shown.xml + "</Blob>"
        }
        xml += "</Blobs>" + XMLEscape.nextMarker(next.map { $0.0 + "\n" + $0.1 }) + "</EnumerationResults>"
        return TransportResponse(status: 200, headers: HeaderFields([("Content-Type", "application/xml")]), body: Data(xml.utf8))
    }
}
