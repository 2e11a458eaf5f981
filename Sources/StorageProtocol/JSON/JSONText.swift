/// Minimal, allocation-light JSON string writing shared by every deterministic writer.
public enum JSONText {
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `s` as a JSON string literal. Non-ASCII stays UTF-8; quotes, backslashes and
    /// control characters are escaped.
    public static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = s
        string.withUTF8 { appendEscaped($0, to: &out) }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether a JSON string written here escapes `byte`: control characters, `"`, `\` and DEL.
    private static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F }

    /// The index of the first byte from `start` that needs an escape, or `bytes.count`. Plain
    /// bytes are skipped eight at a time (``ByteScan``): the scan was a tenth of a seeding run.
    private static func nextEscape(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        while i < bytes.count {
            if i + 8 <= bytes.count, !ByteScan.mayNeedEscape(ByteScan.word(bytes, at: i)) {
                i += 8
            } else if needsEscape(bytes[i]) {
                return i
            } else {
                i += 1
            }
        }
        return bytes.count
    }

    /// Copies runs of bytes that need no escape in one go; only the rare escaped byte is
    /// handled on its own. (Byte-at-a-time appends were half of `generate`'s time.)
    private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        while true {
            let i = nextEscape(in: bytes, from: runStart)
            if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
            guard i < bytes.count else { return }
            let byte = bytes[i]
            runStart = i + 1
            out.append(UInt8(ascii: "\\"))
            switch byte {
            case 0x22, 0x5C: out.append(byte)
            case 0x0A: out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "t"))
            default:
                out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            }
        }
    }

    /// At least as many bytes as ``appendString(_:to:)`` writes for `s` (exactly, but for
    /// control characters, counted at their longest), found without writing them.
    public static func encodedLengthBound(_ s: String) -> Int {
        var string = s
        return string.withUTF8 { bytes in
            var length = 2 + bytes.count
            var i = nextEscape(in: bytes, from: 0)
            while i < bytes.count {
                length += 5
                i = nextEscape(in: bytes, from: i + 1)
            }
            return length
        }
    }
}
