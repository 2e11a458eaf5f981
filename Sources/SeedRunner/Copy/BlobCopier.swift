import AzureStorage
import Foundation
import SeedKit
import Synchronization

/// Copies blobs of a source account into the target (`azseed copy`). Server-side where it
/// can: the target reads the source itself (Put Blob From URL, with a read-only container SAS
/// made from the source's key, or the source's own SAS), so the bytes never pass through this
/// process. Streamed through this process — downloaded to a temporary file, then uploaded —
/// when the target cannot read the source: a source reached over loopback while the target is
/// not, a source signed in with Microsoft Entra ID (a token is not handed on), or a target that
/// answers `CannotVerifyCopySource` for want of reaching or being let into the source (then
/// every later blob is streamed too; a source's other errors stream that blob alone).
public final class BlobCopier: Sendable {
    public let source: BlobClient
    /// Why blobs are streamed instead of copied server-side; nil while server-side copies work.
    private let streamingReason: Mutex<String?>
    /// Each source container's grant and when it expires, by the container's bytes.
    private let grants = Mutex<[ExactString: (token: SASToken?, expiry: Date)]>([:])
    private let streamed = BlobByteCount()
    private let serverSide = BlobByteCount()
    private let grantLifetime: TimeInterval
    /// Where temporary files of streamed blobs go.
    private let scratch: URL

    /// - Parameters:
    ///   - target: the target account, to tell whether it can reach the source at all.
    ///   - grantLifetime: how long the source SAS made for the target is valid.
    public init(
        source: BlobClient, target: StorageAccount, grantLifetime: TimeInterval = 6 * 3600, scratch: URL = FileManager.default.temporaryDirectory
    ) {
        self.source = source
        self.grantLifetime = grantLifetime
        self.scratch = scratch
        var reason: String?
        if source.account.isLoopback && !target.isLoopback {
            reason = "the source \(source.account.blobEndpoint.absoluteString) is on this machine's loopback, which the target cannot reach"
        } else if case .bearer = source.account.credential {
            reason = "the source is signed in with Microsoft Entra ID, whose token is not handed to the target"
        }
        streamingReason = Mutex(reason)
    }

    /// Bytes downloaded from the source and uploaded to the target by this process.
    public var streamedBytes: Int { streamed.value }
    /// Bytes the target read from the source itself.
    public var serverSideBytes: Int { serverSide.value }
    /// Why blobs went through this process, if any did.
    public var fallbackReason: String? { streamingReason.withLock { $0 } }
    /// The source's origin when the target refused to read from it (403 with no source status:
    /// an `azseed emulator` started without `--allow-copy-source` for it); nil otherwise.
    public var refusedOrigin: String? {
        streamingReason.withLock { $0?.hasPrefix("the target does not read sources from") == true }
            ? Self.origin(of: source.account.blobEndpoint) : nil
    }

    /// Makes `target/container/name` hold the source's `sourceContainer/sourceName` as it was
    /// `listed` (its version, content headers and metadata; `blob` is what the plan recorded of
    /// it). Every way of copying — in one request, in blocks, or streamed — stores the same.
    /// `ifAbsent` writes only where no blob is (409 BlobAlreadyExists otherwise), `ifMatch` only
    /// over the blob of that ETag (412): someone else's blob written meanwhile is never replaced.
    func copy(
        container sourceContainer: String, name sourceName: String, listed: BlobProperties, to target: BlobClient, as container: String,
        _ name: String, blob: DesiredBlob, ifAbsent: Bool = false, ifMatch: String? = nil
    ) async throws {
        var options = listed.uploadOptions
        options.contentType = blob.contentType
        options.onlyIfAbsent = ifAbsent
        options.ifMatch = ifMatch
        if streamingReason.withLock({ $0 }) == nil, let grant = grant(for: sourceContainer) {
            var url = source.url(container: sourceContainer, name: sourceName)
            if let grant { url += "?" + grant.query }
            do {
                try await target.copyFromURL(
                    container: container, name: name, source: url, sourceETag: listed.etag, size: blob.size, options: options,
                    md5: blob.md5.isEmpty ? nil : blob.md5Base64)
                serverSide.add(blob.size)
                return
            } catch let error as AzureStorageError where error.code == .sourceConditionNotMet {
                throw Self.changedSinceListed(sourceContainer, sourceName)
            } catch let error as AzureStorageError where error.code == .cannotVerifyCopySource && Self.sourceIsOutOfReach(error) {
                // The target cannot reach the source or is not let in: that holds for every blob,
                // so this one and every later one go through this process.
                streamingReason.withLock { reason in
                    if reason == nil {
                        reason =
                            error.copySourceStatus == nil && error.status == 403
                            ? "the target does not read sources from \(Self.origin(of: self.source.account.blobEndpoint)): 403 CannotVerifyCopySource"
                            : "the target could not read the source (\(error.copySourceStatus.map(String.init) ?? "unreachable"), CannotVerifyCopySource)"
                    }
                }
            } catch let error as AzureStorageError where error.code == .cannotVerifyCopySource || error.code == .md5Mismatch {
                // This blob alone: the source answered the target with an error of its own (still
                // failing after retries, or a conflict), or the target read something else than
                // the blob just listed at that URL (a target whose loopback is not this machine's
                // reads its own account there). It goes through this process, whose view of the
                // source is the one planned; later blobs are still copied server-side.
            }
        }
        try await stream(container: sourceContainer, name: sourceName, to: target, as: container, name, blob: blob, options: options)
    }

    /// Whether a failed copy says the target cannot read the source at all: it could not reach
    /// it (no source status), or the source refused it (401, 403).
    static func sourceIsOutOfReach(_ error: AzureStorageError) -> Bool {
        guard let status = error.copySourceStatus else { return error.status != 404 }
        return status == 401 || status == 403
    }

    /// `scheme://host:port` of an endpoint, as `--allow-copy-source` takes it.
    static func origin(of endpoint: URL) -> String {
        let scheme = endpoint.scheme ?? "https"
        let host = endpoint.host ?? ""
        let port = endpoint.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host):\(port)"
    }

    static func changedSinceListed(_ container: String, _ name: String) -> RunError {
        RunError("blob '\(container)/\(name)' changed in the source since it was listed; run the copy again")
    }

    /// Downloads the source blob to a temporary file and uploads it; the file is removed after.
    private func stream(
        container sourceContainer: String, name sourceName: String, to target: BlobClient, as container: String, _ name: String,
        blob: DesiredBlob, options: BlobUploadOptions
    ) async throws {
        let file = scratch.appendingPathComponent("azseed-copy-\(UUID().uuidString)")
        // Removing the file is a blocking call: on the blocking threads, not the pool.
        let remove = { _ = try? await BlockingPool.run { try FileManager.default.removeItem(at: file) } }
        do {
            let size = try await source.download(container: sourceContainer, name: sourceName, to: file)
            if !blob.md5.isEmpty {
                // The bytes must be the ones planned: a blob changed since the listing is not
                // written under the listing's MD5 (hashing reads the file: on the blocking threads).
                let md5 = try await BlockingPool.run { try FileChunks.md5(of: file) }
                guard md5 == blob.md5 else { throw Self.changedSinceListed(sourceContainer, sourceName) }
            }
            try await target.upload(file: file, container: container, name: name, options: options)
            streamed.add(size)
        } catch {
            await remove()
            throw error
        }
        await remove()
    }

    /// The grant handed to the target for one source container, made once: `.some(nil)` when
    /// the source needs none (anonymous), nil when there is none to hand on.
    /// A grant is made again when less than an hour of it is left, so a long copy never hands
    /// the target an expired one.
    private func grant(for container: String) -> SASToken?? {
        grants.withLock { made in
            let now = Date()
            if let known = made[ExactString(container)], known.expiry.timeIntervalSince(now) > 3600 { return .some(known.token) }
            let expiry = now.addingTimeInterval(grantLifetime)
            guard let grant = source.readGrant(container: container, expiry: expiry, now: now) else { return nil }
            made[ExactString(container)] = (grant, expiry)
            return .some(grant)
        }
    }
}
