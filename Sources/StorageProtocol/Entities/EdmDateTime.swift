/// An `Edm.DateTime`: a UTC instant with 100-nanosecond precision (.NET ticks), the
/// resolution Azure Table storage keeps.
///
/// Kept as an integer rather than `Date` so that formatting, parsing and arithmetic are
/// exact and identical on every machine: snapshots and golden tests depend on it.
public struct EdmDateTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 100-nanosecond intervals since 0001-01-01T00:00:00Z.
    public var ticks: Int64

    public static let ticksPerSecond: Int64 = 10_000_000
    public static let ticksPerMinute: Int64 = 60 * ticksPerSecond
    public static let ticksPerDay: Int64 = 86_400 * ticksPerSecond
    /// Ticks at 1970-01-01T00:00:00Z.
    static let unixEpochTicks: Int64 = 621_355_968_000_000_000

    /// The earliest value Azure Table storage accepts: 1601-01-01T00:00:00Z.
    public static let minimum = EdmDateTime(year: 1601, month: 1, day: 1)
    /// One tick past the latest value Azure accepts (10000-01-01T00:00:00Z, exclusive).
    public static let endOfRange = EdmDateTime(ticks: EdmDateTime(year: 9999, month: 12, day: 31).ticks + ticksPerDay)

    public init(ticks: Int64) { self.ticks = ticks }

    /// Midnight UTC of a calendar date, plus an optional time of day.
    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, fraction: Int64 = 0) {
        let days = Int64(CivilDate.days(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        self.ticks = EdmDateTime.unixEpochTicks + seconds * EdmDateTime.ticksPerSecond + fraction
    }

    /// Seconds since the Unix epoch (fraction dropped toward negative infinity).
    public var unixSeconds: Int64 {
        let t = ticks - EdmDateTime.unixEpochTicks
        return t >= 0 ? t / EdmDateTime.ticksPerSecond : (t - EdmDateTime.ticksPerSecond + 1) / EdmDateTime.ticksPerSecond
    }

    public init(unixSeconds: Int64) {
        self.ticks = EdmDateTime.unixEpochTicks + unixSeconds * EdmDateTime.ticksPerSecond
    }

    /// Whether Azure Table storage can hold this value.
    public var isInAzureRange: Bool { self >= .minimum && self < .endOfRange }

    public static func < (lhs: EdmDateTime, rhs: EdmDateTime) -> Bool { lhs.ticks < rhs.ticks }

    /// The calendar fields of this instant in UTC.
    public var components: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, fraction: Int64) {
        let sinceEpoch = ticks - EdmDateTime.unixEpochTicks
        var days = sinceEpoch / EdmDateTime.ticksPerDay
        var rest = sinceEpoch % EdmDateTime.ticksPerDay
        if rest < 0 {
            rest += EdmDateTime.ticksPerDay
            days -= 1
        }
        let date = CivilDate.civil(days: Int(days))
        let secondsOfDay = Int(rest / EdmDateTime.ticksPerSecond)
        return (
            date.year, date.month, date.day, secondsOfDay / 3600, secondsOfDay / 60 % 60, secondsOfDay % 60,
            rest % EdmDateTime.ticksPerSecond
        )
    }

    /// ISO 8601 with exactly seven fractional digits, as the service returns it:
    /// `2024-01-02T03:04:05.0000000Z`.
    public var iso8601: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(28)
        appendISO8601(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ISO 8601 without a fraction when it is zero (`2024-01-02T03:04:05Z`), for messages.
    public var shortISO8601: String {
        let c = components
        var s = "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T\(pad(c.hour, 2)):\(pad(c.minute, 2)):\(pad(c.second, 2))"
        if c.fraction != 0 { s += "." + pad(Int(c.fraction), 7) }
        return s + "Z"
    }

    public var description: String { iso8601 }

    /// Appends the seven-digit ISO 8601 form to a byte buffer without allocating a String.
    public func appendISO8601(to bytes: inout [UInt8]) {
        appendISO8601(to: &bytes, timeSeparator: [UInt8(ascii: ":")])
    }

    /// ``appendISO8601(to:)`` with `timeSeparator` between hours, minutes and seconds (an
    /// ETag writes `%3A`, written here rather than replaced after).
    public func appendISO8601(to bytes: inout [UInt8], timeSeparator: [UInt8]) {
        let c = components
        appendDigits(c.year, 4, &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(c.month, 2, &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(c.day, 2, &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(c.hour, 2, &bytes)
        bytes += timeSeparator
        appendDigits(c.minute, 2, &bytes)
        bytes += timeSeparator
        appendDigits(c.second, 2, &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(Int(c.fraction), 7, &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }
}

/// `value` in at least `width` digits. Never traps: a negative value gets a sign and a wider
/// one all its digits (a time before year 1 or after 9999, parsed from what a client sent,
/// once trapped here and took the emulator down).
private func appendDigits(_ value: Int, _ width: Int, _ bytes: inout [UInt8]) {
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    let magnitude = value.magnitude
    var divisor: UInt = 1
    for _ in 1..<width { divisor *= 10 }
    while magnitude / divisor >= 10 { divisor *= 10 }
    var rest = magnitude
    while divisor > 0 {
        bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
        rest %= divisor
        divisor /= 10
    }
}

private func pad(_ value: Int, _ width: Int) -> String {
    let s = String(value)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
}

/// Proleptic Gregorian calendar arithmetic (Howard Hinnant's algorithms), so dates never
/// depend on the host's calendar or time zone settings.
public enum CivilDate {
    /// Days since 1970-01-01 for a calendar date.
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The calendar date of a day count since 1970-01-01.
    static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
