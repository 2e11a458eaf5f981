import CJPEG

/// JPEG checks and encoding through libjpeg.
public enum JPEG {
    /// Size of a decoded image.
    public struct Info: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var components: Int
    }

    /// Decodes the whole image; returns its size, or the reason it is not a valid JPEG
    /// (empty, not a JPEG, truncated or corrupt).
    public static func check(_ bytes: [UInt8]) -> Result<Info, JPEGError> {
        if bytes.isEmpty { return .failure(JPEGError(message: "the file is empty")) }
        var width: Int32 = 0
        var height: Int32 = 0
        var components: Int32 = 0
        var message = [CChar](repeating: 0, count: Int(azseed_jpeg_message_capacity()))
        let status = bytes.withUnsafeBufferPointer { buffer in
            azseed_jpeg_check(buffer.baseAddress, UInt(buffer.count), &width, &height, &components, &message)
        }
        if status != 0 {
            let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            return .failure(JPEGError(message: text.isEmpty ? "not a valid JPEG" : text))
        }
        return .success(Info(width: Int(width), height: Int(height), components: Int(components)))
    }

    /// Encodes packed 8-bit RGB pixels (row-major, `width × height × 3` bytes).
    public static func encodeRGB(_ pixels: [UInt8], width: Int, height: Int, quality: Int = 85) throws(JPEGError) -> [UInt8] {
        precondition(pixels.count == width * height * 3, "pixel buffer does not match the size")
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        var message = [CChar](repeating: 0, count: Int(azseed_jpeg_message_capacity()))
        let status = pixels.withUnsafeBufferPointer { buffer in
            azseed_jpeg_encode_rgb(buffer.baseAddress, Int32(width), Int32(height), Int32(quality), &output, &length, &message)
        }
        defer { azseed_jpeg_free(output) }
        guard status == 0, let output else {
            throw JPEGError(message: message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}

/// Why bytes are not a usable JPEG.
public struct JPEGError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
