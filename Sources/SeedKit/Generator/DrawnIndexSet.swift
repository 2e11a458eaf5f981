/// The key indices Floyd's sample has drawn: an open-addressing table of 128-bit integers.
///
/// `Set<UInt128>` seeds and runs SipHash for every insert, a tenth of generating a million
/// events; the indices here are already uniform draws, so a SplitMix finaliser spreads them
/// as well at a fraction of the cost. The draw order, and so every generated value, is the
/// same as with any set: only the membership test is faster.
struct DrawnIndexSet {
    /// No drawn index is `UInt128.max`: indices are below the key space's capacity, itself
    /// at most `UInt128.max`.
    private static let empty = UInt128.max
    private var slots: [UInt128]
    private let mask: Int

    /// A table for `count` indices, at most half full.
    init(count: Int) {
        var size = 16
        while size < count * 2 { size <<= 1 }
        slots = [UInt128](repeating: Self.empty, count: size)
        mask = size - 1
    }

    /// Adds `value`; false when it was there already.
    @inline(__always)
    mutating func insert(_ value: UInt128) -> Bool {
        precondition(value != Self.empty)
        let low = UInt64(truncatingIfNeeded: value)
        let high = UInt64(truncatingIfNeeded: value >> 64)
        var i = Int(truncatingIfNeeded: SeedRandom.mix(low ^ SeedRandom.mix(high))) & mask
        return slots.withUnsafeMutableBufferPointer { table in
            while true {
                let slot = table[i]
                if slot == value { return false }
                if slot == Self.empty {
                    table[i] = value
                    return true
                }
                i = (i + 1) & mask
            }
        }
    }
}
