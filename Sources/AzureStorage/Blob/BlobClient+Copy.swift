import Foundation

/// Server-side copies: the target account reads the source blob itself, so its bytes do
/// not pass through this process (docs/PROTOCOL.md §13).
extension BlobClient {
    /// The blob's URL, path percent-encoded, without any credential.
    public func url(container: String, name: String) -> String {
        pipeline.origin + pipeline.basePath + "/\(container)/\(PercentEncoding.path(name))"
    }

    /// A read grant for container `container` that another account can use to fetch its
    /// blobs: a container SAS made with the account key (valid from 15 minutes ago, to allow
    /// for clock skew, until `expiry`), the account's own SAS, or nothing for an anonymous
    /// account (the container must be public). Nil when the credential cannot be handed on:
    /// a Microsoft Entra ID token is not given to another service, so such a source is read
    /// through this process instead.
    public func readGrant(container: String, expiry: Date, now: Date = Date()) -> SASToken?? {
        switch account.credential {
        case .sharedKey(let key):
            let httpsOnly = account.blobEndpoint.scheme?.lowercased() == "https"
            return .some(
                ServiceSAS(account: account.name, key: key)
                    .containerReadToken(container: container, start: now.addingTimeInterval(-15 * 60), expiry: expiry, httpsOnly: httpsOnly))
        case .sas(let token): return .some(token)
        case .anonymous: return .some(nil)
        case .bearer: return nil
        }
    }

    /// Put Blob From URL: the service reads `source` (an URL carrying its own grant, such as a
    /// SAS) and writes it as block blob `container/name`. With `md5`, the service checks the
    /// source's bytes against it (400 Md5Mismatch) and records it as the blob's Content-MD5.
    /// With `sourceETag`, the service reads the source only while it still has that ETag (412
    /// SourceConditionNotMet otherwise). The source URL is a secret when it carries a SAS: it is
    /// never part of an error message.
    /// The blob stores what `options` says besides the bytes (content headers, metadata), given
    /// explicitly rather than taken from the source, so every way of copying leaves the same.
    public func putBlobFromURL(
        container: String, name: String, source: String, sourceETag: String? = nil, options: BlobUploadOptions,
        md5: String?
    ) async throws {
        try check(container: container, blob: name, operation: "Put Blob From URL")
        var headers = options.headers
        for (header, value) in options.conditionHeaders { headers[header] = value }
        headers["x-ms-blob-type"] = "BlockBlob"
        headers["x-ms-copy-source"] = source
        headers["x-ms-copy-source-blob-properties"] = "false"
        if let sourceETag { headers["x-ms-source-if-match"] = sourceETag }
        if let md5 {
            headers["x-ms-source-content-md5"] = md5
            headers["x-ms-blob-content-md5"] = md5
        }
        _ = try await pipeline.send(pipeline.request("PUT", path(container, name), headers: headers), operation: "Put Blob From URL", expected: [201])
    }

    /// Blobs up to this size are copied with one Put Blob From URL; larger ones in blocks.
    public static let singleCopyLimit = 64 << 20
    /// The range each Put Block From URL copies.
    public static let copyBlockSize = 64 << 20

    /// Copies `source` (an URL carrying its own grant) of `size` bytes into block blob
    /// `container/name`, server-side: one Put Blob From URL up to ``singleCopyLimit``, else Put
    /// Block From URL of ``copyBlockSize`` ranges (``blockParallelism`` at a time) and Put Block
    /// List. The service answers a copy request only when its bytes are copied, and this client
    /// gives up on a request silent for 30 s: blocks keep each request short whatever the size.
    /// With `sourceETag` every request reads the source on that condition, so the blocks are all
    /// of one version of it, the one `md5` describes.
    public func copyFromURL(
        container: String, name: String, source: String, sourceETag: String? = nil, size: Int, options: BlobUploadOptions,
        md5: String?
    ) async throws {
        if size <= Self.singleCopyLimit {
            try await putBlobFromURL(container: container, name: name, source: source, sourceETag: sourceETag, options: options, md5: md5)
            return
        }
        try check(container: container, blob: name, operation: "Put Block From URL")
        let ranges = stride(from: 0, to: size, by: Self.copyBlockSize).map { $0...min($0 + Self.copyBlockSize, size) - 1 }
        let ids = ranges.indices.map { Data(String(format: "copy-%08d", $0).utf8).base64EncodedString() }
        var blocks = zip(ranges, ids).makeIterator()
        try await withBoundedConcurrency(limit: blockParallelism) {
            guard let (range, id) = blocks.next() else { return nil }
            var headers = HeaderFields()
            headers["x-ms-copy-source"] = source
            headers["x-ms-source-range"] = "bytes=\(range.lowerBound)-\(range.upperBound)"
            if let sourceETag { headers["x-ms-source-if-match"] = sourceETag }
            let request = pipeline.request("PUT", path(container, name), query: [("comp", "block"), ("blockid", id)], headers: headers)
            return { _ = try await self.pipeline.send(request, operation: "Put Block From URL", expected: [201]) }
        }
        var headers = options.headers
        for (header, value) in options.conditionHeaders { headers[header] = value }
        if let md5 { headers["x-ms-blob-content-md5"] = md5 }
        headers["Content-Type"] = "application/xml"
        let xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>" + ids.map { "<Latest>\($0)</Latest>" }.joined() + "</BlockList>"
        _ = try await pipeline.send(
            pipeline.request("PUT", path(container, name), query: [("comp", "blocklist")], headers: headers, body: Data(xml.utf8)),
            operation: "Put Block List", expected: [201])
    }
}
