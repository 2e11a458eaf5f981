import Crypto
import Foundation
import StorageProtocol

extension EmulatorStore {
    /// Copies a range of a blob (`range` nil: all of it) into a new object, hashing it on the
    /// way (on the blocking-I/O threads): the bytes of Copy Blob, Put Blob From URL and Put
    /// Block From URL. Returns the record actually read — a concurrent overwrite may have
    /// replaced the one asked for — so sizes and properties come from the same blob as the
    /// bytes. The caller commits the upload or releases it.
    func copyBytes(of asked: BlobRecord, range: (start: Int, end: Int?)? = nil) async throws -> (StagedUpload, BlobRecord) {
        let (source, reader) = try await openBlob(asked)
        defer { reader.close() }
        var offset = 0
        var length = source.size
        if let range {
            guard range.start < source.size || (source.size == 0 && range.start == 0) else {
                throw ServiceError(416, .invalidRange, "The range specified is invalid for the current size of the resource.")
            }
            offset = range.start
            length = max(min(range.end ?? (source.size - 1), source.size - 1) - offset + 1, 0)
        }
        let bytes = self.bytes
        let (start, count) = (offset, length)
        return try await BlockingPool.run {
            let writer = try bytes.makeWriter()
            var md5 = Insecure.MD5()
            var crc = Crc64()
            do {
                var done = 0
                while done < count {
                    let piece = try reader.read(offset: start + done, length: min(4 << 20, count - done))
                    md5.update(data: piece)
                    crc.update(data: piece)
                    try piece.withUnsafeBytes { try writer.append($0) }
                    done += piece.count
                }
                let id = try writer.finish()
                return (StagedUpload(id: id, size: count, md5: Data(md5.finalize()).base64EncodedString(), crc64: crc.base64), source)
            } catch {
                writer.discard()
                throw error
            }
        }
    }
}
