import Crypto
import Foundation

/// A client of one account's Blob service.
public struct BlobClient: Sendable {
    let pipeline: RequestPipeline
    public var account: StorageAccount { pipeline.account }
    /// The settings its requests follow.
    public var configuration: ClientConfiguration { pipeline.configuration }
    /// Files larger than this are uploaded as blocks.
    public var singleUploadLimit = 32 * 1024 * 1024
    public var blockSize = 8 * 1024 * 1024
    /// How many blocks of one large upload, or ranges of one download, travel at once.
    public var blockParallelism = 4

    public init(account: StorageAccount, transport: (any HTTPTransport)? = nil, configuration: ClientConfiguration = ClientConfiguration()) {
        pipeline = RequestPipeline(
            account: account,
            transport: transport
                ?? CurlTransport(timeout: TimeInterval(configuration.timeout), trustedCertificates: configuration.trustedCertificates),
            configuration: configuration, service: .blob)
    }

    func path(_ container: String, _ blob: String? = nil) -> String {
        blob.map { "/\(container)/\(PercentEncoding.path($0))" } ?? "/\(container)"
    }

    func check(container: String, blob: String? = nil, operation: String) throws {
        let url = pipeline.origin + pipeline.basePath + path(container, blob)
        if let problem = StorageNames.containerProblem(container) {
            throw AzureStorageError(kind: .invalidRequest, operation: operation, url: url, message: "container '\(container)': \(problem)")
        }
        if let blob, let problem = StorageNames.addressableBlobProblem(blob) {
            throw AzureStorageError(kind: .invalidRequest, operation: operation, url: url, message: "blob '\(blob)': \(problem)")
        }
    }

    // MARK: Containers

    /// Creates a container with a public access level; 409 ContainerAlreadyExists if it exists,
    /// 409 PublicAccessNotPermitted when the account forbids public access.
    public func createContainer(_ name: String, access: PublicAccess = .private) async throws {
        try check(container: name, operation: "Create Container")
        var headers = HeaderFields()
        if access != .private { headers["x-ms-blob-public-access"] = access.rawValue }
        _ = try await pipeline.send(
            pipeline.request("PUT", path(name), query: [("restype", "container")], headers: headers),
            operation: "Create Container", expected: [201])
    }

    /// Creates the container unless it exists; returns whether it was created.
    @discardableResult
    public func ensureContainer(_ name: String, access: PublicAccess = .private) async throws -> Bool {
        do {
            try await createContainer(name, access: access)
            return true
        } catch let error as AzureStorageError where error.code == .containerAlreadyExists {
            return false
        }
    }

    /// Deletes a container and its blobs.
    public func deleteContainer(_ name: String) async throws {
        try check(container: name, operation: "Delete Container")
        _ = try await pipeline.send(
            pipeline.request("DELETE", path(name), query: [("restype", "container")]), operation: "Delete Container", expected: [202])
    }

    /// The container's public access level from Get Container Properties, or nil when the
    /// container does not exist.
    public func containerProperties(_ name: String) async throws -> PublicAccess? {
        try await accessHeader(name, query: [("restype", "container")], operation: "Get Container Properties")
    }

    /// The container's metadata from Get Container Properties, or nil when the container does
    /// not exist.
    public func containerMetadata(_ name: String) async throws -> [String: String]? {
        try check(container: name, operation: "Get Container Properties")
        do {
            let response = try await pipeline.send(
                pipeline.request("GET", path(name), query: [("restype", "container")]),
                operation: "Get Container Properties", expected: [200])
            var metadata: [String: String] = [:]
            for (header, value) in response.headers where header.lowercased().hasPrefix("x-ms-meta-") {
                metadata[String(header.dropFirst(10))] = value
            }
            return metadata
        } catch let error as AzureStorageError where error.status == 404 {
            return nil
        }
    }

    /// Sets a blob's access tier (Set Blob Tier): `Hot`, `Cool`, `Cold` or `Archive`.
    public func setTier(container: String, name: String, tier: String) async throws {
        try check(container: container, blob: name, operation: "Set Blob Tier")
        _ = try await pipeline.send(
            pipeline.request("PUT", path(container, name), query: [("comp", "tier")], headers: HeaderFields([("x-ms-access-tier", tier)])),
            operation: "Set Blob Tier", expected: [200, 202])
    }

    /// Replaces the container's metadata (Set Container Metadata).
    public func setContainerMetadata(_ name: String, metadata: [String: String]) async throws {
        try check(container: name, operation: "Set Container Metadata")
        var headers = HeaderFields()
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { headers["x-ms-meta-\(key)"] = value }
        _ = try await pipeline.send(
            pipeline.request("PUT", path(name), query: [("restype", "container"), ("comp", "metadata")], headers: headers),
            operation: "Set Container Metadata", expected: [200])
    }

    /// The container's public access level from Get Container ACL, or nil when the
    /// container does not exist.
    public func containerAccess(_ name: String) async throws -> PublicAccess? {
        try await accessHeader(name, query: [("restype", "container"), ("comp", "acl")], operation: "Get Container ACL")
    }

    private func accessHeader(_ name: String, query: [(String, String)], operation: String) async throws -> PublicAccess? {
        try check(container: name, operation: operation)
        do {
            let response = try await pipeline.send(pipeline.request("GET", path(name), query: query), operation: operation, expected: [200])
            return response.headers["x-ms-blob-public-access"].flatMap(PublicAccess.init(rawValue:)) ?? PublicAccess.private
        } catch let error as AzureStorageError where error.status == 404 {
            return nil
        }
    }

    /// Sets the container's public access level (Set Container ACL, no stored policies).
    public func setContainerAccess(_ name: String, access: PublicAccess) async throws {
        try check(container: name, operation: "Set Container ACL")
        var headers = HeaderFields()
        if access != .private { headers["x-ms-blob-public-access"] = access.rawValue }
        _ = try await pipeline.send(
            pipeline.request("PUT", path(name), query: [("restype", "container"), ("comp", "acl")], headers: headers),
            operation: "Set Container ACL", expected: [200])
    }

    // MARK: Blobs

    /// Uploads bytes in one Put Blob, with a transactional Content-MD5 and the stored MD5
    /// set to the same value. Returns the ETag.
    @discardableResult
    public func putBlob(_ data: Data, container: String, name: String, options: BlobUploadOptions = BlobUploadOptions()) async throws -> String? {
        try check(container: container, blob: name, operation: "Put Blob")
        let md5 = Data(Insecure.MD5.hash(data: data)).base64EncodedString()
        var headers = uploadHeaders(options)
        headers["x-ms-blob-type"] = "BlockBlob"
        headers["Content-Type"] = "application/octet-stream"
        headers["Content-MD5"] = md5
        headers["x-ms-blob-content-md5"] = md5
        for (header, value) in options.conditionHeaders { headers[header] = value }
        let response = try await pipeline.send(
            pipeline.request("PUT", path(container, name), headers: headers, body: data), operation: "Put Blob", expected: [201])
        return response.headers["ETag"]
    }

    /// Uploads a file: one Put Blob up to ``singleUploadLimit``, else Put Block of
    /// ``blockSize`` chunks read from disk one at a time, then Put Block List. The file is read
    /// on ``BlockingPool``'s threads; at most a few blocks are in memory at once.
    @discardableResult
    public func upload(file: URL, container: String, name: String, options: BlobUploadOptions = BlobUploadOptions()) async throws -> String? {
        try check(container: container, blob: name, operation: "Put Blob")
        let singleUploadLimit = self.singleUploadLimit
        let whole = try await BlockingPool.run { () -> Data? in
            let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
            return size <= singleUploadLimit ? try Data(contentsOf: file) : nil
        }
        if let whole {
            return try await putBlob(whole, container: container, name: name, options: options)
        }
        let reader = try await BlockingPool.run { try FileChunks(file) }
        defer { reader.close() }
        let blockSize = self.blockSize
        var md5 = Insecure.MD5()
        var ids: [String] = []
        // Up to `blockParallelism` blocks in flight; the next chunk is read while they travel.
        try await withBoundedConcurrency(limit: blockParallelism) {
            guard let chunk = try await BlockingPool.run({ try reader.next(blockSize) }) else { return nil }
            // One MD5 pass over the file: the blob's stored MD5. A block carries no transactional
            // Content-MD5 of its own (a second pass, as much CPU as the rest of the upload); as with
            // the official SDKs' default, TLS and TCP guard each block in transit.
            md5.update(data: chunk)
            let id = Data(String(format: "block-%08d", ids.count).utf8).base64EncodedString()
            ids.append(id)
            let request = pipeline.request("PUT", path(container, name), query: [("comp", "block"), ("blockid", id)], body: chunk)
            return { _ = try await self.pipeline.send(request, operation: "Put Block", expected: [201]) }
        }
        var headers = uploadHeaders(options)
        headers["x-ms-blob-content-md5"] = Data(md5.finalize()).base64EncodedString()
        headers["Content-Type"] = "application/xml"
        for (header, value) in options.conditionHeaders { headers[header] = value }
        let xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>" + ids.map { "<Latest>\($0)</Latest>" }.joined() + "</BlockList>"
        let response = try await pipeline.send(
            pipeline.request("PUT", path(container, name), query: [("comp", "blocklist")], headers: headers, body: Data(xml.utf8)),
            operation: "Put Block List", expected: [201])
        return response.headers["ETag"]
    }

    private func uploadHeaders(_ options: BlobUploadOptions) -> HeaderFields { options.headers }

    /// Downloads a blob, or the inclusive byte range `range` of it.
    public func download(container: String, name: String, range: ClosedRange<Int>? = nil) async throws -> Data {
        try check(container: container, blob: name, operation: "Get Blob")
        var headers = HeaderFields()
        if let range { headers["x-ms-range"] = "bytes=\(range.lowerBound)-\(range.upperBound)" }
        return try await pipeline.send(pipeline.request("GET", path(container, name), headers: headers), operation: "Get Blob", expected: [200, 206])
            .body
    }

    /// Downloads a blob into `file` (created or replaced) in ``blockSize`` ranges, up to
    /// ``blockParallelism`` in flight, each written at its offset on ``BlockingPool``'s threads:
    /// memory stays at a few blocks whatever the blob's size. The ranges after the first are
    /// read with `If-Match` on the first one's ETag, so a blob overwritten meanwhile fails
    /// (412) instead of mixing two versions; a failed download removes the partial file.
    /// Returns the number of bytes written.
    @discardableResult
    public func download(container: String, name: String, to file: URL) async throws -> Int {
        try check(container: container, blob: name, operation: "Get Blob")
        let blockSize = self.blockSize
        let output = try await BlockingPool.run { try FileBlocks(creating: file) }
        do {
            var headers = HeaderFields()
            headers["x-ms-range"] = "bytes=0-\(blockSize - 1)"
            let first: TransportResponse
            do {
                first = try await pipeline.send(
                    pipeline.request("GET", path(container, name), headers: headers), operation: "Get Blob", expected: [200, 206])
            } catch let error as AzureStorageError where error.status == 416 {
                // An empty blob has no byte 0: Azure answers 416 to any range (a missing blob
                // is 404, so the blob exists and is empty).
                try await BlockingPool.run { try output.finish() }
                return 0
            }
            let total = first.status == 200 ? first.body.count : Self.totalLength(first.headers["Content-Range"]) ?? first.body.count
            let etag = first.headers["ETag"]
            let firstBody = first.body
            try await BlockingPool.run { try output.write(firstBody, at: 0) }
            var offset = firstBody.count
            try await withBoundedConcurrency(limit: blockParallelism) {
                guard offset < total else { return nil }
                let range = offset...min(total, offset + blockSize) - 1
                offset = range.upperBound + 1
                var headers = HeaderFields()
                headers["x-ms-range"] = "bytes=\(range.lowerBound)-\(range.upperBound)"
                if let etag { headers["If-Match"] = etag }
                let request = pipeline.request("GET", path(container, name), headers: headers)
                return {
                    let body = try await self.pipeline.send(request, operation: "Get Blob", expected: [206]).body
                    guard body.count == range.count else {
                        throw AzureStorageError(
                            kind: .invalidRequest, operation: "Get Blob",
                            url: self.pipeline.origin + self.pipeline.basePath + self.path(container, name),
                            message: "range \(range.lowerBound)-\(range.upperBound) came back with \(body.count) bytes")
                    }
                    try await BlockingPool.run { try output.write(body, at: range.lowerBound) }
                }
            }
            try await BlockingPool.run { try output.finish() }
            return total
        } catch {
            _ = try? await BlockingPool.run { output.discard() }
            throw error
        }
    }

    /// The blob's length from `Content-Range: bytes 0-8388607/1073741824`.
    static func totalLength(_ contentRange: String?) -> Int? {
        guard let contentRange, let slash = contentRange.lastIndex(of: "/") else { return nil }
        return Int(contentRange[contentRange.index(after: slash)...])
    }

    /// A blob's properties, or nil when it does not exist.
    public func properties(container: String, name: String) async throws -> BlobProperties? {
        try check(container: container, blob: name, operation: "Get Blob Properties")
        do {
            let r = try await pipeline.send(pipeline.request("HEAD", path(container, name)), operation: "Get Blob Properties", expected: [200])
            var metadata: [String: String] = [:]
            for (header, value) in r.headers where header.lowercased().hasPrefix("x-ms-meta-") { metadata[String(header.dropFirst(10))] = value }
            var properties = BlobProperties(
                name: name, contentLength: Int(r.headers["Content-Length"] ?? "") ?? 0, contentType: r.headers["Content-Type"],
                contentMD5: r.headers["Content-MD5"], cacheControl: r.headers["Cache-Control"], contentEncoding: r.headers["Content-Encoding"],
                contentLanguage: r.headers["Content-Language"], contentDisposition: r.headers["Content-Disposition"], etag: r.headers["ETag"],
                lastModified: r.headers["Last-Modified"], metadata: metadata, accessTier: r.headers["x-ms-access-tier"])
            properties.leaseState = r.headers["x-ms-lease-state"]
            return properties
        } catch let error as AzureStorageError where error.status == 404 {
            return nil
        }
    }

    /// Deletes a blob.
    public func deleteBlob(container: String, name: String) async throws {
        try check(container: container, blob: name, operation: "Delete Blob")
        _ = try await pipeline.send(pipeline.request("DELETE", path(container, name)), operation: "Delete Blob", expected: [202])
    }

    /// The container's blobs, page by page (marker paging), with metadata.
    /// The names of every container of the account (List Containers, page by page).
    public func listContainers() async throws -> [String] {
        var names: [String] = []
        var marker: String?
        repeat {
            var query: [(String, String)] = [("comp", "list")]
            if let marker { query.append(("marker", marker)) }
            let response = try await pipeline.send(pipeline.request("GET", "/", query: query), operation: "List Containers", expected: [200])
            let xml = String(decoding: response.body, as: UTF8.self)
            // <Containers><Container><Name>…</Name>…</Container>…</Containers><NextMarker>…</NextMarker>
            var rest = Substring(xml)
            while let open = rest.range(of: "<Container>"), let close = rest.range(of: "</Container>", range: open.upperBound..<rest.endIndex) {
                if let name = XMLText.element("Name", in: String(rest[open.upperBound..<close.lowerBound])) { names.append(name) }
                rest = rest[close.upperBound...]
            }
            marker = XMLText.element("NextMarker", in: String(rest)).flatMap { $0.isEmpty ? nil : $0 }
        } while marker != nil
        return names
    }

    public func list(container: String, prefix: String? = nil, pageSize: Int? = nil) -> BlobListing {
        BlobListing(client: self, container: container, prefix: prefix, pageSize: pageSize)
    }

    func listPage(container: String, prefix: String?, pageSize: Int?, marker: String?) async throws -> (blobs: [BlobProperties], next: String?) {
        try check(container: container, operation: "List Blobs")
        var query: [(String, String)] = [("restype", "container"), ("comp", "list")]
        if let prefix { query.append(("prefix", prefix)) }
        if let marker { query.append(("marker", marker)) }
        if let pageSize { query.append(("maxresults", String(pageSize))) }
        query.append(("include", "metadata"))
        let response = try await pipeline.send(pipeline.request("GET", path(container), query: query), operation: "List Blobs", expected: [200])
        do {
            let page = try BlobListParser.parse(response.body)
            return (page.blobs, page.nextMarker)
        } catch {
            throw AzureStorageError(
                kind: .invalidResponse, operation: "List Blobs", url: pipeline.origin + pipeline.basePath + path(container), message: "\(error)")
        }
    }
}

/// The pages of a blob listing, as an async sequence.
public struct BlobListing: AsyncSequence, Sendable {
    public typealias Element = [BlobProperties]
    let client: BlobClient
    let container: String
    let prefix: String?
    let pageSize: Int?

    public struct AsyncIterator: AsyncIteratorProtocol {
        let listing: BlobListing
        var marker: String?
        var finished = false

        public mutating func next() async throws -> [BlobProperties]? {
            guard !finished else { return nil }
            let page = try await listing.client.listPage(
                container: listing.container, prefix: listing.prefix, pageSize: listing.pageSize, marker: marker)
            marker = page.next
            finished = page.next == nil
            return page.blobs
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(listing: self) }
}
