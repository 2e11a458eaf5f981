extension EdmDateTime {
    /// Parses `YYYY-MM-DD` (midnight UTC) or an ISO 8601 timestamp
    /// `YYYY-MM-DDThh:mm[:ss[.f…]][Z|±hh:mm]`; a timestamp without a zone is UTC.
    /// Up to seven fractional digits are kept exactly; more are rejected rather than rounded.
    public init?(iso8601 text: String) {
        var p = DateScanner(Array(text.utf8))
        guard let year = p.number(4), p.eat("-"), let month = p.number(2), p.eat("-"), let day = p.number(2),
            (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month)
        else { return nil }
        if p.atEnd {
            self.init(year: year, month: month, day: day)
            return
        }
        guard p.eat("T") || p.eat("t") || p.eat(" "), let hour = p.number(2), p.eat(":"), let minute = p.number(2),
            hour < 24, minute < 60
        else { return nil }
        var second = 0
        var fraction: Int64 = 0
        if p.eat(":") {
            guard let s = p.number(2), s < 60 else { return nil }
            second = s
            if p.eat(".") {
                var digits = 0
                while let d = p.digit() {
                    digits += 1
                    if digits > 7 { return nil }
                    fraction = fraction * 10 + Int64(d)
                }
                if digits == 0 { return nil }
                for _ in digits..<7 { fraction *= 10 }
            }
        }
        var offsetMinutes = 0
        if p.eat("Z") || p.eat("z") {
        } else if let sign = p.peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            p.index += 1
            guard let oh = p.number(2), p.eat(":") || true, let om = p.number(2), oh < 24, om < 60 else { return nil }
            offsetMinutes = (oh * 60 + om) * (sign == UInt8(ascii: "-") ? -1 : 1)
        }
        guard p.atEnd else { return nil }
        self.init(year: year, month: month, day: day, hour: hour, minute: minute, second: second, fraction: fraction)
        self.ticks -= Int64(offsetMinutes) * EdmDateTime.ticksPerMinute
    }
}

private struct DateScanner {
    let bytes: [UInt8]
    var index = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }
    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func eat(_ c: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: c) else { return false }
        index += 1
        return true
    }

    mutating func digit() -> Int? {
        guard index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 else { return nil }
        index += 1
        return Int(bytes[index - 1] - 48)
    }

    mutating func number(_ width: Int) -> Int? {
        var value = 0
        for _ in 0..<width {
            guard let d = digit() else { return nil }
            value = value * 10 + d
        }
        return value
    }
}
