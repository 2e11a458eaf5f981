import Foundation
import StorageProtocol

/// Snapshot Blob, and what `?snapshot=` means on the operations that take it.
extension BlobService {
    /// Snapshot Blob: 201 with `x-ms-snapshot`, the snapshot's name.
    func snapshotBlob(_ container: String, _ blob: String, _ request: TransportRequest) async throws -> TransportResponse {
        let metadata = try metadataHeaders(request.headers)
        let record = try await store.snapshotBlob(
            container: container, name: blob, metadata: metadata.isEmpty ? nil : metadata, conditions: try keyedConditions(request))
        var headers = blobHeaders(record)
        headers["x-ms-snapshot"] = record.snapshot
        headers["x-ms-request-server-encrypted"] = "false"
        return TransportResponse(status: 201, headers: headers)
    }

    /// A `snapshot` value: Azure's form, `yyyy-MM-ddTHH:mm:ss.fffffffZ` (400 otherwise).
    static func checkSnapshot(_ value: String) throws {
        let parsed = EdmDateTime(iso8601: value)
        guard parsed != nil else { throw ServiceError.invalidQuery("snapshot", value) }
    }

    /// The blob operations `?snapshot=` may name: reads, and Delete Blob of that snapshot.
    func respondToSnapshot(_ container: String, _ blob: String, _ snapshot: String, _ request: TransportRequest, _ query: QueryParameters)
        async throws -> BlobReply
    {
        try Self.checkSnapshot(snapshot)
        switch (request.method, query["comp"]) {
        case ("POST", "query"): return try await queryBlob(container, blob, request, snapshot: snapshot)
        case ("GET", nil): return try await getBlob(container, blob, request, head: false, snapshot: snapshot)
        case ("HEAD", nil): return try await getBlob(container, blob, request, head: true, snapshot: snapshot)
        case ("GET", "blocklist"): return BlobReply(try await getBlockList(container, blob, request, query, snapshot: snapshot))
        case ("GET", "pagelist"): return BlobReply(try await getPageRanges(container, blob, request, query, snapshot: snapshot))
        case ("GET", "tags"): return BlobReply(try await getBlobTags(container, blob, request, snapshot: snapshot))
        case ("PUT", "tier"):
            guard let tier = try Self.accessTier(request) else {
                throw ServiceError(
                    400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: x-ms-access-tier.")
            }
            _ = try await store.setRetiredTier(container: container, name: blob, kind: .snapshot, key: snapshot, tier: tier)
            return BlobReply(TransportResponse(status: 200))
        case ("DELETE", nil):
            if request.headers["x-ms-delete-snapshots"] != nil {
                throw ServiceError(
                    400, .invalidQueryParameterValue, "x-ms-delete-snapshots is not allowed when deleting a snapshot (?snapshot= names one).")
            }
            try await store.deleteSnapshot(container: container, name: blob, snapshot: snapshot, permanent: try Self.permanentDelete(query))
            return BlobReply(TransportResponse(status: 202))
        default:
            throw ServiceError(
                400, .invalidQueryParameterValue,
                "Value '\(snapshot)' for query parameter 'snapshot' is not valid: a snapshot is read-only (\(request.method) \(query["comp"] ?? "") on it)."
            )
        }
    }

    /// `x-ms-delete-snapshots` of a Delete Blob.
    static func snapshotDeletion(_ request: TransportRequest) throws -> EmulatorStore.SnapshotDeletion {
        switch request.headers["x-ms-delete-snapshots"] {
        case nil: return .none
        case "include": return .include
        case "only": return .only
        case let other?: throw ServiceError.invalidHeader("x-ms-delete-snapshots", other)
        }
    }

    /// The blob operations `?versionid=` may name: reads, Set Blob Tier, Set and Get Blob Tags,
    /// and Delete Blob of that version. The current version's id names the blob itself.
    func respondToVersion(_ container: String, _ blob: String, _ versionId: String, _ request: TransportRequest, _ query: QueryParameters)
        async throws -> BlobReply
    {
        guard EdmDateTime(iso8601: versionId) != nil else { throw ServiceError.invalidQuery("versionid", versionId) }
        switch (request.method, query["comp"]) {
        case ("POST", "query"): return try await queryBlob(container, blob, request, versionId: versionId)
        case ("GET", nil): return try await getBlob(container, blob, request, head: false, versionId: versionId)
        case ("HEAD", nil): return try await getBlob(container, blob, request, head: true, versionId: versionId)
        case ("GET", "blocklist"): return BlobReply(try await getBlockList(container, blob, request, query, versionId: versionId))
        case ("GET", "tags"): return BlobReply(try await getBlobTags(container, blob, request, versionId: versionId))
        case ("PUT", "tags"): return BlobReply(try await setBlobTags(container, blob, request, versionId: versionId))
        case ("PUT", "tier"): return BlobReply(try await setBlobTier(container, blob, request, versionId: versionId))
        case ("DELETE", nil):
            if request.headers["x-ms-delete-snapshots"] != nil {
                throw ServiceError(
                    400, .invalidQueryParameterValue, "x-ms-delete-snapshots is not allowed when deleting a version (?versionid= names one).")
            }
            let (_, found) = try await store.blob(container, blob, versionId: versionId)
            if let found, found.retired == nil {
                // The current version is the blob: deleted without `versionid` (and with `d`), never
                // by its id, which a grant to delete previous versions (`x`) would then cover.
                throw ServiceError(
                    400, .invalidQueryParameterValue,
                    "Value for one of the query parameters specified in the request URI is invalid: versionid names the current version; delete the blob without it."
                )
            }
            try await store.deleteVersion(container: container, name: blob, versionId: versionId, permanent: try Self.permanentDelete(query))
            return BlobReply(TransportResponse(status: 202))
        default:
            throw ServiceError(
                400, .invalidQueryParameterValue,
                "Value for one of the query parameters specified in the request URI is invalid: a version is read-only (\(request.method) \(query["comp"] ?? "") on ?versionid=)."
            )
        }
    }
}
