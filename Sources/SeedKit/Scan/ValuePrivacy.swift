import AzureStorage
import Foundation

/// What `scan` may copy from an account into a dataset by default (docs/SECURITY.md, "the owner
/// of a scanned account" and the people in it): no value that identifies a person, and no value
/// seen in fewer than ``minimumEntities`` entities. E-mail addresses, phone numbers, URLs and
/// free text (anything with white space: names, addresses, notes) are never copied; they become
/// generated text of the same kind (`user7@example.com`). `scan --copy-values` lifts this, for
/// accounts whose data may be copied.
enum ValuePrivacy {
    /// A value must be seen in at least this many entities to be copied.
    static let minimumEntities = 5

    enum Shape: Equatable {
        case email, url, phone, freeText, token
    }

    /// What a text value looks like.
    static func shape(_ text: String) -> Shape {
        let scalars = text.unicodeScalars
        let lower = text.lowercased()
        // Keys cannot hold '/', so a URL in one is `http:host…`: any known scheme counts.
        if text.contains("://") || lower.hasPrefix("www.")
            || ["http:", "https:", "ftp:", "mailto:", "tel:", "file:"].contains(where: { lower.hasPrefix($0) })
        {
            return .url
        }
        if let at = text.firstIndex(of: "@"), text[text.index(after: at)...].contains("."), !scalars.contains(where: { $0.properties.isWhitespace }) {
            return .email
        }
        let digits = scalars.filter { ("0"..."9").contains($0) }.count
        if digits >= 7, scalars.allSatisfy({ ("0"..."9").contains($0) || " +-().".unicodeScalars.contains($0) }) { return .phone }
        if scalars.contains(where: { $0.properties.isWhitespace }) { return .freeText }
        return .token
    }

    /// Whether `value`, seen in `entities` entities, may be copied into a dataset.
    static func mayCopy(_ value: EdmValue, seenIn entities: Int) -> Bool {
        guard entities >= minimumEntities else { return false }
        switch value {
        case .string(let text): return shape(text) == .token
        case .boolean, .int32, .int64, .double: return true
        default: return false  // GUIDs and binary identify the entity they belong to
        }
    }

    /// Generated text of the same shape as `sample`, numbered by `{{helper}}`, as a Mustache
    /// template: the dataset keeps the look of the column, never a value of it.
    static func template(for sample: String, property: String, helper: String) -> String {
        switch shape(sample) {
        case .email: "user{{\(helper)}}@example.com"
        case .url: "https://example.com/\(safe(property))/{{\(helper)}}"
        case .phone: "+1 555 {{\(helper)}}"
        case .freeText, .token: "\(safe(property)) {{\(helper)}}"
        }
    }

    /// Letters, digits and '_' of a name, for text a template writes.
    static func safe(_ name: String) -> String {
        let kept = String(
            String.UnicodeScalarView(name.unicodeScalars.filter { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") }))
        return kept.isEmpty ? "value" : kept
    }

    /// Bounds rounded outward to one significant digit: a range says the magnitude of what was
    /// seen, not its extreme values.
    static func roundedOutward(_ low: Int64, _ high: Int64) -> (Int64, Int64) {
        // In 128 bits, so bounds near Int64's ends neither overflow nor trap; clamped back.
        func step(_ v: Int128) -> Int128 {
            var s: Int128 = 1
            while s * 10 <= v.magnitude { s *= 10 }
            return s
        }
        let l = Int128(low)
        let h = Int128(high)
        let ls = step(l)
        let hs = step(h)
        let a = l >= 0 ? l / ls * ls : -((-l + ls - 1) / ls * ls)
        let b = h >= 0 ? (h + hs - 1) / hs * hs : -(-h / hs * hs)
        return (Int64(clamping: min(a, l)), Int64(clamping: max(b, h)))
    }

    /// An integer column's range without copied values: rounded outward, and a bound that is
    /// still a value seen in fewer than ``minimumEntities`` entities (a round salary) moved one
    /// step further, so no rare value is the bound.
    static func roundedPastRare(_ p: PropertyObservation) -> (Int64, Int64) {
        let (low, high) = (p.minInt ?? 0, p.maxInt ?? 0)
        if p.present < minimumEntities { return roundedForFew(low, high) }
        var (a, b) = roundedOutward(low, high)
        // Zero says nothing of anyone: a range may start or end there.
        if a == low, low != 0, p.seen(low) < minimumEntities, low > Int64.min { a = roundedOutward(low - 1, high).0 }
        if b == high, high != 0, p.seen(high) < minimumEntities, high < Int64.max { b = roundedOutward(low, high + 1).1 }
        return (a, b)
    }

    /// A double column's range without copied values, as ``roundedPastRare(_:)``.
    static func roundedPastRare(doublesOf p: PropertyObservation) -> (Double, Double) {
        let (low, high) = (p.minDouble ?? 0, p.maxDouble ?? 0)
        if p.present < minimumEntities { return roundedForFew(low, high) }
        var (a, b) = roundedOutward(low, high)
        if a == low, low != 0, low.nextDown.isFinite, p.seen(.double(low)) < minimumEntities { a = roundedOutward(low.nextDown, high).0 }
        if b == high, high != 0, high.nextUp.isFinite, p.seen(.double(high)) < minimumEntities { b = roundedOutward(low, high.nextUp).1 }
        return (a, b)
    }

    /// A private date window around `low…high`: from the first of the month strictly before
    /// `low`'s moment to the first of the month after `high` (whole years when fewer than
    /// ``minimumEntities`` entities hold dates: a month around one person's birth date would
    /// still point at it), inside Azure's range. No bound is a value seen, nor its day.
    static func dateWindow(_ low: Int64, _ high: Int64, few: Bool) -> (Int64, Int64) {
        func start(_ ticks: Int64) -> (year: Int, month: Int) {
            let c = EdmDateTime(ticks: ticks).components
            return few ? (c.year, 1) : (c.year, c.month)
        }
        func ticks(_ at: (year: Int, month: Int)) -> Int64 {
            let year = at.year + (at.month - 1) / 12
            let month = (at.month - 1) % 12 + 1
            return EdmDateTime(year: year, month: month, day: 1).ticks
        }
        let first = start(low - 1)
        let last = start(high)
        let after = few ? (last.year + 1, 1) : (last.year, last.month + 1)
        return (max(ticks(first), EdmDateTime.minimum.ticks), min(ticks(after), EdmDateTime.endOfRange.ticks - 1))
    }

    /// The range of a column fewer than ``minimumEntities`` entities hold: each bound rounded
    /// outward a whole magnitude further (7 → 0…10, 412,345 → 0…1,000,000), so a range
    /// around one value does not centre on it.
    static func roundedForFew(_ low: Int64, _ high: Int64) -> (Int64, Int64) {
        func magnitude(_ v: Int128) -> Int128 {
            var s: Int128 = 10
            while s <= v.magnitude { s *= 10 }
            return s
        }
        let (l, h) = (Int128(low), Int128(high))
        let a = l >= 0 ? 0 : -((-l + magnitude(l) - 1) / magnitude(l) * magnitude(l))
        let b = h <= 0 ? 0 : (h + magnitude(h) - 1) / magnitude(h) * magnitude(h)
        return (Int64(clamping: min(a, l)), Int64(clamping: max(b, h)))
    }

    static func roundedForFew(_ low: Double, _ high: Double) -> (Double, Double) {
        func magnitude(_ v: Double) -> Double { v == 0 ? 1 : pow(10, floor(log10(abs(v))) + 1) }
        let a = low >= 0 ? 0 : -((-low / magnitude(low)).rounded(.up) * magnitude(low))
        let b = high <= 0 ? 0 : (high / magnitude(high)).rounded(.up) * magnitude(high)
        return (a.isFinite ? min(a, low) : low, b.isFinite ? max(b, high) : high)
    }

    /// Doubles rounded outward to one significant digit, each bound the double nearest its
    /// decimal (`7e-1` is 0.7, where 7 × 0.1 is 0.7000000000000001): written as it reads.
    static func roundedOutward(_ low: Double, _ high: Double) -> (Double, Double) {
        func rounded(_ v: Double, _ rule: FloatingPointRoundingRule) -> Double {
            guard v.isFinite, v != 0 else { return v }
            let exponent = Int(floor(log10(abs(v))))
            let digit = (v / pow(10, Double(exponent))).rounded(rule)
            // Subnormals (10^-324 is 0 as a double) are left as they are.
            guard digit.isFinite, abs(digit) <= 10 else { return v }
            return Double("\(Int(digit))e\(exponent)").flatMap { $0.isFinite ? $0 : nil } ?? v
        }
        let a = rounded(low, .down)
        let b = rounded(high, .up)
        return (min(a, low), max(b, high))
    }
}
