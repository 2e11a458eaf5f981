/// The project's own deterministic generator: SplitMix64.
///
/// Every value azseed generates is drawn through this type's methods, never through the
/// standard library's `random(in:)`, whose algorithm may change between Swift versions.
/// The algorithms here are fixed forever: changing any of them breaks the determinism
/// contract and the golden tests.
public struct SeedRandom: Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { self.state = seed }

    /// The next 64 random bits (SplitMix64, Steele, Lea & Flood 2014).
    @inline(__always)
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return SeedRandom.mix(state)
    }

    /// SplitMix64's finaliser: a bijective avalanche of 64 bits.
    @inline(__always)
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in `0..<bound` (Lemire's multiply-and-reject; unbiased).
    public mutating func below(_ bound: UInt64) -> UInt64 {
        precondition(bound > 0, "bound must be positive")
        var m = next().multipliedFullWidth(by: bound)
        if m.low < bound {
            let threshold = (0 &- bound) % bound
            while m.low < threshold {
                m = next().multipliedFullWidth(by: bound)
            }
        }
        return m.high
    }

    /// A uniform integer in `0...bound` over 128 bits (mask-and-reject; unbiased).
    public mutating func upTo(_ bound: UInt128) -> UInt128 {
        if bound <= UInt128(UInt64.max - 1) { return UInt128(below(UInt64(bound) + 1)) }
        let bits = 128 - bound.leadingZeroBitCount
        let mask: UInt128 = bits == 128 ? ~0 : (UInt128(1) << bits) - 1
        while true {
            let candidate = (UInt128(next()) << 64 | UInt128(next())) & mask
            if candidate <= bound { return candidate }
        }
    }

    /// A uniform double in `[0, 1)` with 53 random bits.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// An independent stream for a name (a kind, a table): the seed mixed with the name's
    /// FNV-1a hash. Adding an unrelated kind therefore never shifts another kind's values.
    public static func stream(seed: UInt64, name: String) -> UInt64 {
        mix(seed ^ mix(fnv1a(name)))
    }

    /// The generator of one entity, from its stream and its identity within that stream.
    public static func forEntity(stream: UInt64, identity: UInt128) -> SeedRandom {
        let low = UInt64(truncatingIfNeeded: identity)
        let high = UInt64(truncatingIfNeeded: identity >> 64)
        return SeedRandom(seed: mix(stream ^ mix(low ^ mix(high &+ 0x632B_E59B_D9B4_E019))))
    }

    /// 64-bit FNV-1a over UTF-8.
    public static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}
