import Foundation

/// Stand-ins for blobs a scan does not copy: the same size, and for JPEG a real image (a
/// placeholder portrait, padded with comment segments to the size), so the dataset loader's
/// JPEG check passes; JSON, XML, CSV and text valid in their format; other content bytes drawn
/// from the blob's name.
public enum BlobPlaceholder {
    public static func bytes(name: String, size: Int, contentType: String, index: Int) -> [UInt8] {
        if contentType == "image/jpeg", let image = try? Portrait.jpeg(name: (name as NSString).deletingPathExtension, index: index) {
            return padded(jpeg: image, to: size)
        }
        // Text formats stay valid in their format (a dataset's .json blob parses as JSON): a
        // small document, padded with what the format ignores or repeats.
        if contentType.contains("json") { return padded(Array("{\"placeholder\":true}".utf8), with: UInt8(ascii: " "), to: size) }
        if contentType.contains("xml") { return padded(Array("<placeholder/>".utf8), with: UInt8(ascii: " "), to: size) }
        if contentType.contains("csv") || contentType.hasPrefix("text/") {
            let line = Array((contentType.contains("csv") ? "placeholder\n" : "placeholder text\n").utf8)
            return (0..<max(size, line.count)).map { line[$0 % line.count] }
        }
        var random = SeedRandom(seed: StableHash.keys("blob", name))
        return (0..<max(size, 1)).map { _ in UInt8(truncatingIfNeeded: random.below(256)) }
    }

    /// `document` followed by `filler` up to `size` bytes (never cut: a smaller size gets the
    /// document whole).
    static func padded(_ document: [UInt8], with filler: UInt8, to size: Int) -> [UInt8] {
        document + Array(repeating: filler, count: max(0, size - document.count))
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
