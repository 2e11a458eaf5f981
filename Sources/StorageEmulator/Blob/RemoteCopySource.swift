import AzureStorage
import Crypto
import Foundation

/// A copy source on another service (another account, another emulator, any HTTP(S) URL the
/// source's SAS or public access lets anyone read): fetched the way Azure fetches it, with
/// plain GETs carrying only what the URL carries (docs/PROTOCOL.md §13).
///
/// The bytes are read in ranges of ``rangeSize`` and written to the byte store as they come
/// (the store's writes on ``BlockingPool``'s threads), so memory holds one range whatever the
/// blob's size. Transfers run on `CurlTransport`'s own event-loop thread.
struct RemoteCopySource: Sendable {
    let transport: any HTTPTransport
    static let rangeSize = 8 << 20

    /// What was read: the bytes (staged, for the caller to commit or release), and the source's
    /// properties and metadata from its response headers.
    struct Fetched {
        var upload: StagedUpload
        var properties: BlobHTTPProperties
        var metadata: [(String, String)]
    }

    /// Reads `url` (bytes `range` of it, else all) into `bytes`; with `ifMatch`, only while the
    /// source has that ETag (412 SourceConditionNotMet otherwise). A source that answers with an
    /// error, or cannot be reached, is Azure's `CannotVerifyCopySource` with the source's status
    /// (500 when it gave none); the URL is never echoed, since its query may be a SAS.
    func fetch(_ url: String, range: (start: Int, end: Int?)?, ifMatch: String? = nil, into bytes: any ByteStore, now: Date) async throws -> Fetched {
        guard let request = TransportRequest(method: "GET", url: url) else {
            throw ServiceError(400, "InvalidHeaderValue", "The value for one of the HTTP headers is not in the correct format: x-ms-copy-source.")
        }
        let writer = try await BlockingPool.run { try bytes.makeWriter() }
        do {
            var md5 = Insecure.MD5()
            var offset = range?.start ?? 0
            var end = range?.end  // inclusive; nil: to the blob's end, learnt from the first answer
            // Every GET is conditional on the ETag asked for, else on the first answer's: the
            // ranges are all of one version of the source.
            var etag = ifMatch
            var first: TransportResponse?
            var written = 0
            while end.map({ offset <= $0 }) ?? true {
                let last = min(offset + Self.rangeSize - 1, end ?? Int.max)
                var ranged = request
                ranged.headers["x-ms-version"] = "2023-11-03"
                ranged.headers["x-ms-date"] = SharedKeySigner.httpDate(now)
                ranged.headers["x-ms-range"] = "bytes=\(offset)-\(last)"
                // Servers other than Azure's know only the standard header.
                ranged.headers["Range"] = "bytes=\(offset)-\(last)"
                if let etag { ranged.headers["If-Match"] = etag }
                let response = try await get(ranged)
                if response.status == 412, ifMatch != nil { throw BlobService.sourceConditionNotMet }
                if response.status == 416, first == nil, offset == 0 {
                    // An empty blob has no byte 0 (Azure answers any range with 416): its
                    // properties come from a HEAD, not from the error answer.
                    var head = request
                    head.method = "HEAD"
                    head.headers["x-ms-version"] = "2023-11-03"
                    head.headers["x-ms-date"] = SharedKeySigner.httpDate(now)
                    if let etag { head.headers["If-Match"] = etag }
                    let properties = try await get(head)
                    if properties.status == 412, ifMatch != nil { throw BlobService.sourceConditionNotMet }
                    guard properties.status == 200 else { throw Self.sourceFailed(properties) }
                    // Only an empty source has no byte 0; any other 416 is not taken for one.
                    guard properties.headers["Content-Length"] == "0" else {
                        throw ServiceError(500, "CannotVerifyCopySource", "The copy source refused its first byte but is not empty.")
                    }
                    first = properties
                    end = -1
                    break
                }
                guard response.status == 200 || response.status == 206 else { throw Self.sourceFailed(response) }
                var body = response.body
                if response.status == 200 {
                    // A server that ignores ranges sends the whole object: keep the range asked for.
                    let stop = min(body.count, (end ?? Int.max) == Int.max ? body.count : end! + 1)
                    body = offset < stop ? body.subdata(in: offset..<stop) : Data()
                    end = offset + body.count - 1
                }
                if first == nil {
                    first = response
                    etag = response.headers["ETag"]
                    if response.status == 206 {
                        guard let total = Self.totalLength(response.headers["Content-Range"]) else {
                            throw ServiceError(500, "CannotVerifyCopySource", "The copy source answered a range without its total length.")
                        }
                        end = min(end ?? (total - 1), total - 1)
                    }
                }
                md5.update(data: body)
                try await BlockingPool.run { [body] in try body.withUnsafeBytes { try writer.append($0) } }
                written += body.count
                offset += body.count
                if body.isEmpty || response.status == 200 { break }
            }
            if let end, offset <= end {
                // Fewer bytes than the source said it holds: never stored as if whole.
                throw ServiceError(500, "CannotVerifyCopySource", "The copy source ended before the length it announced.")
            }
            if let start = range?.start, written == 0, start > 0 {
                throw ServiceError(416, "InvalidRange", "The range specified is invalid for the current size of the resource.")
            }
            let id = try await BlockingPool.run { try writer.finish() }
            let upload = StagedUpload(id: id, size: written, md5: Data(md5.finalize()).base64EncodedString())
            let headers = first?.headers ?? HeaderFields()
            let properties = BlobHTTPProperties(contentType: headers["Content-Type"] ?? "application/octet-stream",
                                                contentMD5: range == nil ? headers["Content-MD5"] ?? upload.md5 : nil,
                                                contentEncoding: headers["Content-Encoding"], contentLanguage: headers["Content-Language"],
                                                contentDisposition: headers["Content-Disposition"], cacheControl: headers["Cache-Control"])
            let metadata = headers.fields.filter { $0.name.lowercased().hasPrefix("x-ms-meta-") }.map { (String($0.name.dropFirst(10)), $0.value) }
            return Fetched(upload: upload, properties: properties, metadata: metadata)
        } catch {
            _ = try? await BlockingPool.run { writer.discard() }
            throw error
        }
    }

    private func get(_ request: TransportRequest) async throws -> TransportResponse {
        do {
            return try await transport.send(request)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // Unreachable, refused, TLS not trusted: Azure's answer for a source it cannot read.
            throw ServiceError(500, "CannotVerifyCopySource", "Could not verify the copy source within the specified time: the source could not be reached.")
        }
    }

    /// The source's own error, passed on as Azure does: its status, `CannotVerifyCopySource`,
    /// and its error code in `x-ms-copy-source-error-code`.
    static func sourceFailed(_ response: TransportResponse) -> ServiceError {
        // Only the source's own errors are passed on as its status; anything else (a redirect,
        // a success code not asked for) is the copy's failure.
        guard (400...599).contains(response.status) else {
            var error = ServiceError(500, "CannotVerifyCopySource", "The copy source answered \(response.status).")
            error.headers.append(("x-ms-copy-source-status-code", String(response.status)))
            return error
        }
        let message = response.status == 404 ? "The specified blob does not exist." : response.status == 403
            ? "This request is not authorized to perform this operation using this permission." : "The copy source answered \(response.status)."
        var error = ServiceError(response.status, "CannotVerifyCopySource", message)
        error.headers.append(("x-ms-copy-source-status-code", String(response.status)))
        if let code = response.headers["x-ms-error-code"] { error.headers.append(("x-ms-copy-source-error-code", code)) }
        return error
    }

    /// The blob's length from `Content-Range: bytes 0-8388607/1073741824`.
    static func totalLength(_ contentRange: String?) -> Int? {
        guard let contentRange, let slash = contentRange.lastIndex(of: "/") else { return nil }
        return Int(contentRange[contentRange.index(after: slash)...])
    }
}
