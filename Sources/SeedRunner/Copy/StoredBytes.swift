import AzureStorage
import Foundation

/// The MD5 of the bytes a blob holds, read and hashed here — not its `Content-MD5` property,
/// which anyone who may write the blob can set to anything (Set Blob Properties). Asked only
/// where a blob found in the way would be taken for one azseed wrote (a move resumed, a retried
/// write met by a blob already there), so its cost is paid rarely.
enum StoredBytes {
    /// The blob's bytes' MD5, or nil when it is gone. Streamed through a private temporary
    /// file (`0600`), removed after.
    static func md5(_ blobs: BlobClient, container: String, name: String) async throws -> [UInt8]? {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("azseed-check-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            _ = try await blobs.download(container: container, name: name, to: file)
        } catch let error as AzureStorageError where error.status == 404 {
            return nil
        }
        return try await BlockingPool.run { try FileChunks.md5(of: file) }
    }
}
