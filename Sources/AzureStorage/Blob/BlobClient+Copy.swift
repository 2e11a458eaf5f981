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
            return .some(ServiceSAS(account: account.name, key: key)
                .containerReadToken(container: container, start: now.addingTimeInterval(-15 * 60), expiry: expiry, httpsOnly: httpsOnly))
        case .sas(let token): return .some(token)
        case .anonymous: return .some(nil)
        case .bearer: return nil
        }
    }

    /// Put Blob From URL: the service reads `source` (an URL carrying its own grant, such as a
    /// SAS) and writes it as block blob `container/name`. With `md5`, the service checks the
    /// source's bytes against it (400 Md5Mismatch) and records it as the blob's Content-MD5.
    /// The source URL is a secret when it carries a SAS: it is never part of an error message.
    public func putBlobFromURL(container: String, name: String, source: String, contentType: String, md5: String?) async throws {
        try check(container: container, blob: name, operation: "Put Blob From URL")
        var headers = HeaderFields()
        headers["x-ms-blob-type"] = "BlockBlob"
        headers["x-ms-copy-source"] = source
        headers["x-ms-blob-content-type"] = contentType
        if let md5 {
            headers["x-ms-source-content-md5"] = md5
            headers["x-ms-blob-content-md5"] = md5
        }
        _ = try await pipeline.send(pipeline.request("PUT", path(container, name), headers: headers), operation: "Put Blob From URL", expected: [201])
    }
}
