/// A seeded bijection of `0..<size`: a balanced Feistel network over the smallest even number
/// of bits that holds `size`, walked until it lands inside (cycle walking; each step is a
/// bijection, so the walk ends, on average in under 4 steps). `unique:` fields take the
/// entity's generation index through it, so entity `i`'s value depends on the seed, the field
/// and `i` alone — never on the count or on the order of other entities — and no two indices
/// below `size` share one. Fixed forever, like ``SeedRandom``.
public struct IndexPermutation: Sendable, Equatable {
    public let size: UInt64
    private let keys: [UInt64]
    private let halfBits: UInt64

    public init(size: UInt64, seed: UInt64) {
        precondition(size > 0)
        self.size = size
        let bits = max(2, 64 - (size - 1).leadingZeroBitCount)
        halfBits = UInt64((bits + 1) / 2)
        var random = SeedRandom(seed: seed)
        keys = (0..<4).map { _ in random.next() }
    }

    /// The image of `index` (`index < size`).
    public func callAsFunction(_ index: UInt64) -> UInt64 {
        precondition(index < size)
        var x = index
        repeat { x = step(x) } while x >= size
        return x
    }

    private func step(_ x: UInt64) -> UInt64 {
        let mask: UInt64 = halfBits == 32 ? 0xFFFF_FFFF : (1 << halfBits) - 1
        var left = x >> halfBits
        var right = x & mask
        for key in keys {
            let next = left ^ (SeedRandom.mix(right ^ key) & mask)
            left = right
            right = next
        }
        return left << halfBits | right
    }
}
