import Foundation

extension BlobClient {
    /// Set Blob Properties: the blob's HTTP properties become `options`'s (content type, cache
    /// control, encoding, language, disposition) and its stored MD5 `md5` — the service clears
    /// any property not sent, so pass the ones to keep. With `etag`, only while the blob has it
    /// (412 otherwise).
    public func setProperties(container: String, name: String, options: BlobUploadOptions, md5: String?, etag: String? = nil) async throws {
        try check(container: container, blob: name, operation: "Set Blob Properties")
        var headers = HeaderFields()
        for (header, value) in options.headers where !header.lowercased().hasPrefix("x-ms-meta-") { headers[header] = value }
        if let md5 { headers["x-ms-blob-content-md5"] = md5 }
        if let etag { headers["If-Match"] = etag }
        _ = try await pipeline.send(
            pipeline.request("PUT", path(container, name), query: [("comp", "properties")], headers: headers), operation: "Set Blob Properties",
            expected: [200])
    }

    /// Set Blob Metadata: the blob's metadata becomes `metadata`. With `etag`, only while the
    /// blob has it.
    public func setMetadata(container: String, name: String, metadata: [String: String], etag: String? = nil) async throws {
        try check(container: container, blob: name, operation: "Set Blob Metadata")
        var headers = HeaderFields()
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { headers["x-ms-meta-\(key)"] = value }
        if let etag { headers["If-Match"] = etag }
        _ = try await pipeline.send(
            pipeline.request("PUT", path(container, name), query: [("comp", "metadata")], headers: headers), operation: "Set Blob Metadata",
            expected: [200])
    }

    /// Deletes a blob only while it has `etag` (412 ConditionNotMet once it changed).
    public func deleteBlob(container: String, name: String, etag: String) async throws {
        try check(container: container, blob: name, operation: "Delete Blob")
        _ = try await pipeline.send(
            pipeline.request("DELETE", path(container, name), headers: HeaderFields([("If-Match", etag)])), operation: "Delete Blob", expected: [202])
    }
}
