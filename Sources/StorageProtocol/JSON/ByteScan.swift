/// Eight bytes at a time: whether a word of text holds a byte a JSON writer or reader must stop
/// at. Each test is exact as a yes/no (no byte is missed); a word that says yes is then read
/// byte by byte. (The "has a zero byte" and "has a byte less than n" tricks of Bit Twiddling
/// Hacks, https://graphics.stanford.edu/~seander/bithacks.html#HasLessInWord.)
public enum ByteScan {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The eight bytes at `offset` (little-endian order does not matter: every byte is tested).
    @inline(__always)
    public static func word(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64 {
        UnsafeRawPointer(bytes.baseAddress! + offset).loadUnaligned(as: UInt64.self)
    }

    /// Whether some byte of `w` is below `n` (n ≤ 128).
    @inline(__always)
    static func hasLess(_ w: UInt64, _ n: UInt64) -> Bool { (w &- ones &* n) & ~w & highs != 0 }

    /// Whether some byte of `w` is `byte`.
    @inline(__always)
    static func has(_ w: UInt64, _ byte: UInt64) -> Bool {
        let x = w ^ (ones &* byte)
        return (x &- ones) & ~x & highs != 0
    }

    /// A control character, `"`, `\` or DEL: what a JSON string written by ``JSONText`` escapes.
    @inline(__always)
    public static func mayNeedEscape(_ w: UInt64) -> Bool { hasLess(w, 0x20) || has(w, 0x22) || has(w, 0x5C) || has(w, 0x7F) }

    /// A control character, `"` or `\`: where a JSON string being read ends or needs decoding.
    @inline(__always)
    public static func mayEndString(_ w: UInt64) -> Bool { hasLess(w, 0x20) || has(w, 0x22) || has(w, 0x5C) }
}
