/// The key space of a generated kind: a mixed-radix number whose digits are the key
/// fields' choices (first key field least significant). Drawing distinct numbers gives
/// distinct natural keys, with no retries and no duplicates.
struct KeySpace: Sendable {
    /// Each key component's name and number of values.
    var components: [(name: String, size: UInt128)]
    /// The product of the sizes; nil when it exceeds 128 bits.
    var capacity: UInt128?

    init(components: [(name: String, size: UInt128)]) {
        self.components = components
        var product: UInt128 = 1
        var overflow = false
        for c in components {
            let (p, o) = product.multipliedReportingOverflow(by: c.size)
            product = p
            overflow = overflow || o
        }
        capacity = overflow ? nil : product
    }

    /// Writes the digits of `index` into `out` (reused, so the hot path does not allocate).
    func digits(of index: UInt128, into out: inout [UInt128]) {
        out.removeAll(keepingCapacity: true)
        var rest = index
        for c in components {
            out.append(rest % c.size)
            rest /= c.size
        }
    }

    /// `count` distinct indices below `capacity`, by Robert Floyd's algorithm: exactly
    /// `count` draws from `random`, whatever the ratio of count to capacity. Each index is
    /// passed to `body` in draw order.
    static func sample(count: Int, capacity: UInt128, random: inout SeedRandom, _ body: (UInt128) -> Void) {
        var chosen = DrawnIndexSet(count: count)
        var j = capacity - UInt128(count)
        while j < capacity {
            let t = random.upTo(j)
            let pick = chosen.insert(t) ? t : j
            if pick == j { _ = chosen.insert(j) }
            body(pick)
            j += 1
        }
    }

    /// "EventName(6) × EventDate(259200)", for messages.
    var explanation: String {
        components.map { "\($0.name)(\($0.size))" }.joined(separator: " × ")
    }
}
