import Crypto
import Foundation
import StorageProtocol
import Synchronization

/// A request body already in the byte store — streamed there by the HTTP layer as it
/// arrived, durable once the commit that claims it runs (group commit flushes first) — that
/// no row refers to yet. The operation that commits it claims it;
/// whoever answered the request deletes it otherwise (a refused, failed or faulted upload).
final class StagedUpload: Sendable {
    let id: String
    let size: Int
    /// The MD5 of the bytes, base64, computed while they streamed.
    let md5: String
    /// Their CRC64 as Azure sends it (`x-ms-content-crc64`), computed alongside.
    let crc64: String
    private let claimed = Mutex(false)

    init(id: String, size: Int, md5: String, crc64: String) {
        self.id = id
        self.size = size
        self.md5 = md5
        self.crc64 = crc64
    }

    /// Stores `data` as an upload (for requests whose body arrived whole).
    static func store(_ data: Data, in bytes: any ByteStore) async throws -> StagedUpload {
        let id = try await BlockingPool.run { try bytes.put(data) }
        return StagedUpload(
            id: id, size: data.count, md5: Data(Insecure.MD5.hash(data: data)).base64EncodedString(), crc64: Crc64.base64(of: data))
    }

    /// A row now refers to the bytes: they are no longer the request's to delete.
    func claim() { claimed.withLock { $0 = true } }

    /// Deletes the bytes unless an operation claimed them.
    func release(from bytes: any ByteStore) async {
        guard !claimed.withLock({ $0 }) else { return }
        let id = self.id
        _ = try? await BlockingPool.run { bytes.delete(id) }
    }
}
