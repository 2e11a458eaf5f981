import Foundation

/// Reads a page blob: its extents' bytes where they were written, zeros elsewhere. Every
/// byte object is opened when the reader is made, so a concurrent Put Page that frees one
/// does not change what this reader sends (as a whole-blob overwrite does not for a block
/// blob's reader).
struct SparseReader: ByteReader {
    let size: Int
    let extents: [(PageExtent, any ByteReader)]

    func read(offset: Int, length: Int) throws -> Data {
        guard offset + length <= size else { throw ByteStoreError(description: "page blob is shorter than the range read") }
        var out = Data(count: length)
        for (extent, reader) in extents {
            guard let part = extent.clipped(to: offset, offset + length) else { continue }
            let bytes = try reader.read(offset: part.dataOffset, length: part.length)
            out.replaceSubrange((part.start - offset)..<(part.end - offset), with: bytes)
        }
        return out
    }

    func close() {
        for (_, reader) in extents { reader.close() }
    }
}
