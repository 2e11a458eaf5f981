import Foundation
import StorageProtocol

/// The server's clock for Timestamps, ETags and Last-Modified: strictly increasing within a
/// process, so two writes never get the same entity ETag.
final class ServerClock: @unchecked Sendable {
    private let lock = NSLock()
    private var last: Int64 = 0

    /// The wall clock in .NET ticks (100 ns), not made monotonic.
    static func wallClock() -> EdmDateTime {
        EdmDateTime(ticks: EdmDateTime(unixSeconds: 0).ticks + Int64(Date().timeIntervalSince1970 * 10_000_000))
    }

    /// Now, in .NET ticks, later than any value returned before.
    func now() -> EdmDateTime {
        let ticks = Self.wallClock().ticks
        return lock.withLock {
            last = max(ticks, last + 1)
            return EdmDateTime(ticks: last)
        }
    }

    /// RFC 1123 text of a tick value (seconds resolution), as Last-Modified carries it.
    static func httpDate(_ time: EdmDateTime) -> String {
        SharedKeySigner.httpDate(Date(timeIntervalSince1970: TimeInterval(time.unixSeconds)))
    }

    /// A strong ETag from a time: `"0x8DC…"`, the shape Blob storage uses.
    static func etag(_ time: EdmDateTime) -> String {
        "\"0x" + String(UInt64(bitPattern: time.ticks), radix: 16, uppercase: true) + "\""
    }

    /// Parses an RFC 1123 date (`Sat, 21 Nov 2026 09:33:14 GMT`).
    static func parseHTTPDate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT",
            let day = Int(parts[1]), let year = Int(parts[3]),
            let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].firstIndex(of: String(parts[2]))
        else { return nil }
        let hms = parts[4].split(separator: ":").compactMap { Int($0) }
        guard hms.count == 3, (1...31).contains(day), (0...23).contains(hms[0]), (0...59).contains(hms[1]), (0...60).contains(hms[2]) else {
            return nil
        }
        let t = EdmDateTime(year: year, month: month + 1, day: day, hour: hms[0], minute: hms[1], second: hms[2])
        return Date(timeIntervalSince1970: TimeInterval(t.unixSeconds))
    }
}
