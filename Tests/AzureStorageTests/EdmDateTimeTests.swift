import AzureStorage
import Testing

@Suite struct EdmDateTimeTests {
    @Test func formatsSevenFractionalDigits() {
        let d = EdmDateTime(year: 2024, month: 1, day: 2, hour: 3, minute: 4, second: 5, fraction: 1_234_567)
        #expect(d.iso8601 == "2024-01-02T03:04:05.1234567Z")
    }

    @Test func parsesDatesAndTimestamps() throws {
        #expect(EdmDateTime(iso8601: "2026-11-21")?.iso8601 == "2026-11-21T00:00:00.0000000Z")
        #expect(EdmDateTime(iso8601: "2026-11-21T09:33:14Z")?.iso8601 == "2026-11-21T09:33:14.0000000Z")
        #expect(EdmDateTime(iso8601: "2026-11-21T09:33:14.5+01:00")?.iso8601 == "2026-11-21T08:33:14.5000000Z")
        #expect(EdmDateTime(iso8601: "1601-01-01T00:00:00.0000000Z") == .minimum)
        #expect(EdmDateTime(iso8601: "2026-02-30") == nil)
        #expect(EdmDateTime(iso8601: "2026-1-1") == nil)
        #expect(EdmDateTime(iso8601: "2026-11-21T25:00Z") == nil)
        #expect(EdmDateTime(iso8601: "2026-11-21T09:33:14.12345678Z") == nil)
    }

    @Test func roundTripsAcrossTheAzureRange() {
        var ticks = EdmDateTime.minimum.ticks
        let step: Int64 = 9_876_543_210_987
        while ticks < EdmDateTime.endOfRange.ticks {
            let d = EdmDateTime(ticks: ticks)
            #expect(EdmDateTime(iso8601: d.iso8601) == d)
            ticks += step
        }
    }

    @Test func unixEpoch() {
        #expect(EdmDateTime(unixSeconds: 0).iso8601 == "1970-01-01T00:00:00.0000000Z")
        #expect(EdmDateTime(unixSeconds: -1).iso8601 == "1969-12-31T23:59:59.0000000Z")
        #expect(EdmDateTime(unixSeconds: -1).unixSeconds == -1)
    }
}
