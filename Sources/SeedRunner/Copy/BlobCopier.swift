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
/// answers `CannotVerifyCopySource` (then every later blob is streamed too).
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
    public init(source: BlobClient, target: StorageAccount, grantLifetime: TimeInterval = 6 * 3600, scratch: URL = FileManager.default.temporaryDirectory) {
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

    /// Makes `target/container/name` hold the source's `sourceContainer/sourceName` (`blob` is
    /// what the plan recorded of it).
    func copy(container sourceContainer: String, name sourceName: String, to target: BlobClient, as container: String, _ name: String,
              blob: DesiredBlob) async throws {
        if streamingReason.withLock({ $0 }) == nil, let grant = grant(for: sourceContainer) {
            var url = source.url(container: sourceContainer, name: sourceName)
            if let grant { url += "?" + grant.query }
            do {
                try await target.copyFromURL(container: container, name: name, source: url, size: blob.size, contentType: blob.contentType,
                                             md5: blob.md5.isEmpty ? nil : blob.md5Base64)
                serverSide.add(blob.size)
                return
            } catch let error as AzureStorageError where error.code == "CannotVerifyCopySource" && error.status != 404 {
                // The target cannot read the source (unreachable, not trusted, not authorised):
                // this blob and every later one go through this process.
                streamingReason.withLock { reason in
                    if reason == nil { reason = "the target could not read the source (\(error.status.map(String.init) ?? "no status") CannotVerifyCopySource)" }
                }
            } catch let error as AzureStorageError where error.code == "CannotVerifyCopySource" || error.code == "Md5Mismatch" {
                // The target read something else than the blob just listed at that URL (a target
                // whose loopback is not this machine's reads its own account there): this blob
                // goes through this process, whose view of the source is the one planned.
            }
        }
        try await stream(container: sourceContainer, name: sourceName, to: target, as: container, name, blob: blob)
    }

    /// Downloads the source blob to a temporary file and uploads it; the file is removed after.
    private func stream(container sourceContainer: String, name sourceName: String, to target: BlobClient, as container: String, _ name: String,
                        blob: DesiredBlob) async throws {
        let file = scratch.appendingPathComponent("azseed-copy-\(UUID().uuidString)")
        // Removing the file is a blocking call: on the blocking threads, not the pool.
        let remove = { _ = try? await BlockingPool.run { try FileManager.default.removeItem(at: file) } }
        do {
            let size = try await source.download(container: sourceContainer, name: sourceName, to: file)
            if !blob.md5.isEmpty {
                // The bytes must be the ones planned: a blob changed since the listing is not
                // written under the listing's MD5 (hashing reads the file: on the blocking threads).
                let md5 = try await BlockingPool.run { try FileChunks.md5(of: file) }
                guard md5 == blob.md5 else {
                    throw RunError("blob '\(sourceContainer)/\(sourceName)' changed in the source since it was listed (its MD5 differs); run the copy again")
                }
            }
            try await target.upload(file: file, container: container, name: name, options: BlobUploadOptions(contentType: blob.contentType))
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
