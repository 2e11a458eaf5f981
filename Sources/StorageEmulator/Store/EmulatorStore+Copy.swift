import Crypto
import Foundation

extension EmulatorStore {
    /// Copies `length` bytes of a stored object from `offset` into a new one, hashing them on
    /// the way (on the blocking-I/O threads): the bytes of Copy Blob, Put Blob From URL and
    /// Put Block From URL. The caller commits the upload or releases it.
    func copyBytes(of source: BlobRecord, offset: Int, length: Int) async throws -> StagedUpload {
        let (_, reader) = try await openBlob(source)
        defer { reader.close() }
        let bytes = self.bytes
        return try await BlockingIO.run {
            let writer = try bytes.makeWriter()
            var md5 = Insecure.MD5()
            do {
                var done = 0
                while done < length {
                    let piece = try reader.read(offset: offset + done, length: min(4 << 20, length - done))
                    md5.update(data: piece)
                    try piece.withUnsafeBytes { try writer.append($0) }
                    done += piece.count
                }
                let id = try writer.finish()
                return StagedUpload(id: id, size: length, md5: Data(md5.finalize()).base64EncodedString())
            } catch {
                writer.discard()
                throw error
            }
        }
    }
}
