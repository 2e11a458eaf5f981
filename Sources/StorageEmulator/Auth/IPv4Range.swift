/// A SAS's `sip`: one IPv4 address or an inclusive range `a-b` (docs/PROTOCOL.md §11).
struct IPv4Range: Sendable, Equatable {
    let low: UInt32
    let high: UInt32

    init?(_ text: String) {
        let ends = text.split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 1 || ends.count == 2, let low = Self.address(String(ends[0])),
            let high = ends.count == 2 ? Self.address(String(ends[1])) : low, low <= high
        else { return nil }
        self.low = low
        self.high = high
    }

    func contains(_ address: UInt32) -> Bool { low <= address && address <= high }

    /// Dotted-quad text as a number; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as its IPv4 one.
    static func address(_ text: String) -> UInt32? {
        var text = Substring(text)
        if text.lowercased().hasPrefix("::ffff:") { text = text.dropFirst(7) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), let octet = UInt8(part) else { return nil }
            value = value << 8 | UInt32(octet)
        }
        return value
    }
}
