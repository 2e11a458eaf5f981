import Foundation

/// Stand-ins for blobs a scan does not copy: the same size, and for JPEG a real image (a
/// placeholder portrait, padded with comment segments to the size), so the dataset loader's
/// JPEG check passes; other content is filler text or bytes drawn from the blob's name.
public enum BlobPlaceholder {
    public static func bytes(name: String, size: Int, contentType: String, index: Int) -> [UInt8] {
        if contentType == "image/jpeg", let image = try? Portrait.jpeg(name: (name as NSString).deletingPathExtension, index: index) {
            return padded(jpeg: image, to: size)
        }
        if contentType.hasPrefix("text/") || contentType.contains("json") || contentType.contains("xml") || contentType.contains("csv") {
            let line = Array("placeholder for \(name)\n".utf8)
            return (0..<max(size, 1)).map { line[$0 % line.count] }
        }
        var random = SeedRandom(seed: StableHash.keys("blob", name))
        return (0..<max(size, 1)).map { _ in UInt8(truncatingIfNeeded: random.below(256)) }
    }

    /// The image with COM segments after its SOI marker adding up to `size` (each segment is
    /// 4 to 65,537 bytes); an image already as large, or within 3 bytes, is left as it is.
    static func padded(jpeg: [UInt8], to size: Int) -> [UInt8] {
        var extra = size - jpeg.count
        guard extra >= 4, jpeg.count >= 2 else { return jpeg }
        var segments: [UInt8] = []
        while extra >= 4 {
            // Leave at least 4 bytes for a last segment, or none.
            var length = min(extra, 65_537)
            if (1...3).contains(extra - length) { length = extra - 4 }
            let payload = length - 4
            segments += [0xFF, 0xFE, UInt8((payload + 2) >> 8), UInt8((payload + 2) & 0xFF)]
            segments += Array(repeating: 0x20, count: payload)
            extra -= length
        }
        return Array(jpeg[0..<2]) + segments + Array(jpeg[2...])
    }
}
