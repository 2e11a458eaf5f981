/// The Storage service's ordering of canonicalized header names: a two-level collation in
/// which most punctuation is ignored at the first level (so `x-ms-meta-a_b` < `x-ms-meta-a1`
/// < `x-ms-meta-ab`), and `'` and `-` are compared by position at the second. The weight
/// tables are the service's, as the official SDKs carry them.
enum HeaderCollation {
    /// True when `a` sorts before `b`.
    static func precedes(_ a: String, _ b: String) -> Bool { compare(Array(a.unicodeScalars), Array(b.unicodeScalars)) < 0 }

    static func compare(_ lhs: [Unicode.Scalar], _ rhs: [Unicode.Scalar]) -> Int {
        var level = 0
        var i = 0
        var j = 0
        while level < 2 {
            if level == 1 && i != j { return i > j ? -1 : 1 }
            let w1 = i < lhs.count ? weight(lhs[i], level) : 1
            let w2 = j < rhs.count ? weight(rhs[j], level) : 1
            if w1 == 1 && w2 == 1 {
                i = 0
                j = 0
                level += 1
            } else if w1 == w2 {
                i += 1
                j += 1
            } else if w1 == 0 {
                i += 1
            } else if w2 == 0 {
                j += 1
            } else {
                return w1 < w2 ? -1 : 1
            }
        }
        return 0
    }

    private static func weight(_ scalar: Unicode.Scalar, _ level: Int) -> Int {
        let v = Int(scalar.value)
        guard v < 128 else { return 0xFFFF }
        return level == 0 ? primary[v] : (v == 0x27 ? 0x8012 : v == 0x2D ? 0x8212 : 0)
    }

    /// First-level weights of ASCII 0–127 (0: ignored).
    private static let primary: [Int] = {
        var w = [Int](repeating: 0, count: 128)
        let punctuation: [(Character, Int)] = [
            ("!", 0x71C), ("#", 0x71F), ("$", 0x721), ("%", 0x723), ("&", 0x725),
            ("*", 0x72D), ("+", 0x803), (".", 0x733), ("^", 0x743), ("_", 0x744),
            ("`", 0x748), ("|", 0x74C), ("~", 0x750),
        ]
        for (c, weight) in punctuation { w[Int(c.asciiValue!)] = weight }
        let digits = [0xD03, 0xD1A, 0xD1C, 0xD1E, 0xD20, 0xD22, 0xD24, 0xD26, 0xD28, 0xD2A]
        for (i, weight) in digits.enumerated() { w[48 + i] = weight }
        let letters = [
            0xE02, 0xE09, 0xE0A, 0xE1A, 0xE21, 0xE23, 0xE25, 0xE2C, 0xE32, 0xE35, 0xE36, 0xE48, 0xE51,
            0xE70, 0xE7C, 0xE7E, 0xE89, 0xE8A, 0xE91, 0xE99, 0xE9F, 0xEA2, 0xEA4, 0xEA6, 0xEA7, 0xEA9,
        ]
        for (i, weight) in letters.enumerated() {
            w[65 + i] = weight
            w[97 + i] = weight
        }
        return w
    }()
}
