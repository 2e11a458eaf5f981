import Crypto
import Foundation
import StorageProtocol

/// A copy source on another service (another account, another emulator, any HTTP(S) URL the
/// source's SAS or public access lets anyone read): fetched the way Azure fetches it, with
/// plain GETs carrying only what the URL carries (docs/PROTOCOL.md §13) — and only from the
/// origins the operator allowed (``CopySourceAllowance``; none by default).
///
/// The bytes are read in ranges of ``rangeSize`` and written to the byte store as they come
/// (the store's writes on ``BlockingPool``'s threads), so memory holds one range whatever the
/// blob's size: an answer longer than the range asked for is cut there, and a source that
/// ignores ranges is read whole only while it fits in one. Every GET is bounded by what is
/// left of the copy's deadline and by a minimum rate; redirects are never followed
/// (docs/SECURITY.md). Transfers run on `CurlTransport`'s own event-loop thread.
struct RemoteCopySource: Sendable {
    var transport = CurlTransport()
    var allowances: [CopySourceAllowance] = []
    /// Seconds a copy may spend reading its source, all ranges together.
    var timeout = 300
    /// How refusals spell the start options they suggest.
    var names = SettingNames.library
    /// Below this rate for ``slowWindow`` seconds a GET fails.
    var minimumBytesPerSecond = 16 << 10
    var slowWindow = 15
    static let rangeSize = 8 << 20

    /// The refusal of a source whose origin was not allowed: no source status, as when a source
    /// cannot be reached, so `azseed copy` streams the blobs itself instead.
    func notAllowed(_ request: TransportRequest) -> ServiceError {
        var shown = RequestLog.displayURL(TransportRequest(method: "GET", origin: request.origin, path: "/"))
        if shown.hasSuffix("/") { shown.removeLast() }
        return ServiceError(
            403, .cannotVerifyCopySource,
            ("This emulator reads no copy source outside its own account unless its origin is allowed: \(shown) is not (start it with \(Setting.allowedCopySource) \(shown))."
                as Phrase).rendered(names)
        )
    }

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
    /// `maxBytes` bounds what is stored as a direct write of the operation would be bounded: a
    /// source announcing more is refused at its first answer, one sending more is cut off.
    func fetch(
        _ url: String, range: (start: Int, end: Int?)?, ifMatch: String? = nil, authorization: String? = nil, maxBytes: Int = .max,
        into bytes: any ByteStore, now: Date
    ) async throws -> Fetched {
        guard let request = TransportRequest(method: "GET", url: url) else {
            throw ServiceError(400, .invalidHeaderValue, "The value for one of the HTTP headers is not in the correct format: x-ms-copy-source.")
        }
        guard let allowance = allowances.first(where: { $0.matches(request.origin) }) else { throw notAllowed(request) }
        let deadline = ContinuousClock.now + .seconds(timeout)
        func limits(_ bytes: Int) throws -> TransferLimits {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                throw ServiceError(
                    500, .cannotVerifyCopySource, "Could not verify the copy source within the specified time: it took longer than \(timeout) s.")
            }
            return TransferLimits(
                maxBodyBytes: bytes, deadline: max(1, Int(left.components.seconds)), minimumBytesPerSecond: minimumBytesPerSecond,
                slowWindow: slowWindow, publicAddressesOnly: allowance.isWildcard)
        }
        let writer = try await BlockingPool.run { try bytes.makeWriter() }
        do {
            var md5 = Insecure.MD5()
            var crc = Crc64()
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
                // `x-ms-copy-source-authorization`: the caller's token for the source, sent only to it.
                if let authorization { ranged.headers["Authorization"] = authorization }
                let response = try await get(ranged, limits(last - offset + 1))
                if response.status == 412, ifMatch != nil { throw BlobService.sourceConditionNotMet }
                if response.status == 416, first == nil, offset == 0 {
                    // An empty blob has no byte 0 (Azure answers any range with 416): its
                    // properties come from a HEAD, not from the error answer.
                    var head = request
                    head.method = "HEAD"
                    head.headers["x-ms-version"] = "2023-11-03"
                    head.headers["x-ms-date"] = SharedKeySigner.httpDate(now)
                    if let etag { head.headers["If-Match"] = etag }
                    let properties = try await get(head, limits(0))
                    if properties.status == 412, ifMatch != nil { throw BlobService.sourceConditionNotMet }
                    guard properties.status == 200 else { throw Self.sourceFailed(properties) }
                    // Only an empty source has no byte 0; any other 416 is not taken for one.
                    guard properties.headers["Content-Length"] == "0" else {
                        throw ServiceError(500, .cannotVerifyCopySource, "The copy source refused its first byte but is not empty.")
                    }
                    first = properties
                    end = -1
                    break
                }
                guard response.status == 200 || response.status == 206 else { throw Self.sourceFailed(response) }
                var body = response.body
                if response.status == 200 {
                    // A server that ignores ranges sends the whole object from its first byte: it
                    // is taken only when that is the range asked for and all of it came (no more
                    // than one range is ever held).
                    let announced = response.headers["Content-Length"].flatMap(Int.init)
                    guard offset == 0, body.count < last + 1 || announced == body.count else {
                        throw ServiceError(
                            500, .cannotVerifyCopySource,
                            "The copy source ignores Range and is larger than \(Self.rangeSize >> 20) MiB; it cannot be copied from.")
                    }
                    let stop = min(body.count, (end ?? Int.max) == Int.max ? body.count : end! + 1)
                    body = offset < stop ? body.subdata(in: offset..<stop) : Data()
                    end = offset + body.count - 1
                }
                if response.status == 206 {
                    // Only the bytes the source says it sent, starting where they were asked for.
                    guard let sent = Self.sentRange(response.headers["Content-Range"]), sent.start == offset else {
                        throw ServiceError(500, .cannotVerifyCopySource, "The copy source answered a range other than the one asked for.")
                    }
                    if body.count > sent.end - sent.start + 1 { body = body.prefix(sent.end - sent.start + 1) }
                }
                if first == nil {
                    first = response
                    etag = response.headers["ETag"]
                    if response.status == 206 {
                        guard let total = Self.totalLength(response.headers["Content-Range"]) else {
                            throw ServiceError(500, .cannotVerifyCopySource, "The copy source answered a range without its total length.")
                        }
                        end = min(end ?? (total - 1), total - 1)
                    }
                    if let end, end - (range?.start ?? 0) + 1 > maxBytes { throw tooLarge(end - (range?.start ?? 0) + 1, maxBytes) }
                }
                if written + body.count > maxBytes { throw tooLarge(written + body.count, maxBytes) }
                md5.update(data: body)
                crc.update(data: body)
                try await BlockingPool.run { [body] in try body.withUnsafeBytes { try writer.append($0) } }
                written += body.count
                offset += body.count
                if body.isEmpty || response.status == 200 { break }
            }
            if let end, offset <= end {
                // Fewer bytes than the source said it holds: never stored as if whole.
                throw ServiceError(500, .cannotVerifyCopySource, "The copy source ended before the length it announced.")
            }
            if let start = range?.start, written == 0, start > 0 {
                throw ServiceError(416, .invalidRange, "The range specified is invalid for the current size of the resource.")
            }
            let id = try await BlockingPool.run { try writer.finish() }
            let upload = StagedUpload(id: id, size: written, md5: Data(md5.finalize()).base64EncodedString(), crc64: crc.base64)
            let headers = first?.headers ?? HeaderFields()
            let properties = BlobHTTPProperties(
                contentType: headers["Content-Type"] ?? "application/octet-stream",
                contentMD5: range == nil ? headers["Content-MD5"] ?? upload.md5 : nil,
                contentEncoding: headers["Content-Encoding"], contentLanguage: headers["Content-Language"],
                contentDisposition: headers["Content-Disposition"], cacheControl: headers["Cache-Control"])
            // What a source answers is stored only if a direct write of it would be: metadata names
            // that are C# identifiers, a Content-MD5 that is 16 bytes of base64.
            let metadata: [(String, String)]
            do {
                metadata = try metadataHeaders(headers)
            } catch {
                throw ServiceError(500, .cannotVerifyCopySource, "The copy source answered metadata that is not valid: \(error.message)")
            }
            if let md5 = properties.contentMD5, Data(base64Encoded: md5)?.count != 16 {
                throw ServiceError(500, .cannotVerifyCopySource, "The copy source answered a Content-MD5 that is not 16 bytes of base64.")
            }
            return Fetched(upload: upload, properties: properties, metadata: metadata)
        } catch {
            _ = try? await BlockingPool.run { writer.discard() }
            throw error
        }
    }

    /// A source larger than the operation may store (`--max-blob-mib`, Azure's limits).
    func tooLarge(_ size: Int, _ limit: Int) -> ServiceError {
        ServiceError(
            413, .requestBodyTooLarge,
            ("The copy source holds \(size) bytes, more than the \(limit) this operation may store here (\(Setting.maxBlobSize); 256 MiB for Copy Blob From URL)."
                as Phrase).rendered(names)
        )
    }

    private func get(_ request: TransportRequest, _ limits: TransferLimits) async throws -> TransportResponse {
        do {
            return try await transport.send(request, limits: limits)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // Unreachable, refused, TLS not trusted: Azure's answer for a source it cannot read.
            throw ServiceError(
                500, .cannotVerifyCopySource, "Could not verify the copy source within the specified time: the source could not be reached.")
        }
    }

    /// The source's own error, passed on as Azure does: its status, `CannotVerifyCopySource`,
    /// and its error code in `x-ms-copy-source-error-code`.
    static func sourceFailed(_ response: TransportResponse) -> ServiceError {
        // Only the source's own errors are passed on as its status; anything else (a redirect,
        // a success code not asked for) is the copy's failure.
        guard (400...599).contains(response.status) else {
            var error = ServiceError(500, .cannotVerifyCopySource, "The copy source answered \(response.status).")
            error.headers.append(("x-ms-copy-source-status-code", String(response.status)))
            return error
        }
        let message =
            response.status == 404
            ? "The specified blob does not exist."
            : response.status == 403
                ? "This request is not authorized to perform this operation using this permission." : "The copy source answered \(response.status)."
        var error = ServiceError(response.status, .cannotVerifyCopySource, message)
        error.headers.append(("x-ms-copy-source-status-code", String(response.status)))
        if let code = response.headers["x-ms-error-code"] { error.headers.append(("x-ms-copy-source-error-code", code)) }
        return error
    }

    /// The first and last byte from `Content-Range: bytes 0-8388607/1073741824`.
    static func sentRange(_ contentRange: String?) -> (start: Int, end: Int)? {
        guard let contentRange, contentRange.hasPrefix("bytes "), let slash = contentRange.firstIndex(of: "/") else { return nil }
        let parts = contentRange[contentRange.index(contentRange.startIndex, offsetBy: 6)..<slash].split(separator: "-")
        guard parts.count == 2, let start = Int(parts[0]), let end = Int(parts[1]), end >= start else { return nil }
        return (start, end)
    }

    /// The blob's length from `Content-Range: bytes 0-8388607/1073741824`.
    static func totalLength(_ contentRange: String?) -> Int? {
        guard let contentRange, let slash = contentRange.lastIndex(of: "/") else { return nil }
        return Int(contentRange[contentRange.index(after: slash)...])
    }
}
