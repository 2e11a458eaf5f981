import AzureStorage
import Foundation
import Testing

@testable import StorageEmulator

/// Storage Analytics' writers: an entry has Azure's 30 fields (38 in 2.0) whatever its values
/// hold; retention removes logs and metrics rows older than their days and keeps the rest;
/// metrics rows merge with what is stored (averages weighed by their requests).
@Suite struct StorageAnalyticsTests {
    static func observation(at time: EdmDateTime, status: Int = 200, userAgent: String = "ua") -> StorageAnalytics.Observation {
        StorageAnalytics.Observation(
            service: .blob, operation: StorageOperation("GetBlob", .read), status: status, authentication: .sas, start: time, milliseconds: 4,
            url: "http://h/a/c/b?sig=redacted", objectKey: "/a/c/b", requestID: "id", client: "127.0.0.1", version: "2026-10-06",
            requestBytes: 0, responseBytes: 5, contentMD5: "", etag: "\"0x1\"", lastModified: "", conditions: "", userAgent: userAgent,
            referrer: "", clientRequestID: "")
    }

    @Test func anEntryHasAzuresFieldsWhateverItsValuesHold() {
        let now = EdmDateTime(unixSeconds: 1_800_000_000)
        let hostile = Self.observation(at: now, userAgent: "a;b\"c\nd&e")
        for (version, count) in [("1.0", 30), ("2.0", 38)] {
            let line = AnalyticsLogWriter.line(hostile, version: version, account: "acct")
            #expect(!line.contains("\n"))
            // Split as Azure's readers split: at semicolons outside quotes.
            var fields: [String] = []
            var field = ""
            var quoted = false
            for c in line {
                if c == "\"" { quoted.toggle() }
                if c == ";" && !quoted {
                    fields.append(field)
                    field = ""
                } else {
                    field.append(c)
                }
            }
            fields.append(field)
            #expect(fields.count == count)
            #expect(fields[3] == "SASSuccess" && fields[7] == "sas" && fields[24] == "\"0x1\"")
            #expect(fields[27] == "\"a;b&quot;c&#10;d&amp;e\"")
        }
    }

    /// Splits an entry as Azure's readers do: at semicolons outside quotes.
    static func fields(_ line: String) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        for c in line.unicodeScalars {
            if c == "\"" { quoted.toggle() }
            if c == ";" && !quoted {
                fields.append(field)
                field = ""
            } else {
                field.unicodeScalars.append(c)
            }
        }
        fields.append(field)
        return fields
    }

    /// Every value a caller chooses, fuzzed with separators, quotes (leading ones too: a
    /// `Content-MD5: "x";FORGED;"y` added fields before) and line breaks: the entry keeps
    /// Azure's field count and one line, and each value reads back where it belongs.
    @Test func noCallerValueAddsFieldsOrLines() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        let alphabet: [Character] = ["\"", ";", "\n", "\r", "&", "a", "Z", "0", " ", "\u{e9}", "#", "=", "\u{2028}", "\u{85}", "\u{0B}", "\u{2029}"]
        func hostile() -> String {
            let length = Int(next() % 12)
            return String((0..<length).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] })
        }
        let now = EdmDateTime(unixSeconds: 1_800_000_000)
        for trial in 0..<2_000 {
            var o = Self.observation(at: now)
            let which = trial % 10
            let value = trial < 10 ? "\"x\";FORGED;\"y" : hostile()
            switch which {
            case 0: o.contentMD5 = value
            case 1: o.version = value
            case 2: o.url = value
            case 3: o.objectKey = value
            case 4: o.etag = value
            case 5: o.conditions = value
            case 6: o.userAgent = value
            case 7: o.referrer = value
            case 8: o.clientRequestID = value
            default: o.client = value
            }
            for (version, count) in [("1.0", 30), ("2.0", 38)] {
                let line = AnalyticsLogWriter.line(o, version: version, account: "acct")
                #expect(line.unicodeScalars.allSatisfy { !AnalyticsLogWriter.isLineBreak($0) }, "trial \(trial): a line break in the entry")
                #expect(Self.fields(line).count == count, "trial \(trial), field \(which): \(line)")
            }
        }
    }

    @Test func retentionRemovesWhatIsOlderThanItsDays() async throws {
        let store = try EmulatorStore(dataDirectory: nil)
        let now = EdmDateTime(unixSeconds: 1_800_000_000)
        let old = EdmDateTime(ticks: now.ticks - 3 * 864_000_000_000)
        let writer = AnalyticsLogWriter(store: store, account: "acct")
        try await writer.write([Self.observation(at: old)], service: .blob, version: "1.0")
        try await writer.write([Self.observation(at: now)], service: .blob, version: "1.0")
        try await writer.removeOlder(than: 2, service: .blob, now: now)
        let (left, _) = try await store.listBlobs(container: "$logs", prefix: "blob/", marker: "", limit: 100)
        #expect(left.map(\.name) == [AnalyticsLogWriter.hourFolder(now, .blob) + "000000.log"])

        var rows: [MetricsKey: MetricsCounts] = [:]
        for time in [old, now] {
            var counts = MetricsCounts()
            counts.add(Self.observation(at: time))
            rows[MetricsKey(service: .blob, granularity: .hour, period: MetricsKey.period(time, .hour), rowKey: "user;All")] = counts
        }
        let metrics = MetricsWriter(store: store)
        try await metrics.write(rows)
        try await metrics.removeOlder(than: 2, service: .blob, granularity: .hour, now: now)
        let kept = try await store.scanEntities(table: "$MetricsHourPrimaryTransactionsBlob", partition: nil, after: nil, limit: 10)
        #expect(kept.map(\.partitionKey) == [MetricsKey.period(now, .hour)])
    }

    @Test func metricsRowsMergeWithWhatIsStored() async throws {
        let store = try EmulatorStore(dataDirectory: nil)
        let now = EdmDateTime(unixSeconds: 1_800_000_000)
        let key = MetricsKey(service: .blob, granularity: .minute, period: MetricsKey.period(now, .minute), rowKey: "user;All")
        var first = MetricsCounts()
        first.add(Self.observation(at: now))
        var second = MetricsCounts()
        var slow = Self.observation(at: now, status: 404)
        slow.milliseconds = 10
        second.add(slow)
        try await MetricsWriter(store: store).write([key: first])
        try await MetricsWriter(store: store).write([key: second])
        let row = try await store.entity(table: key.table, partitionKey: key.period, rowKey: key.rowKey).entity
        #expect(row["TotalRequests"] == .int64(2))
        #expect(row["AverageE2ELatency"] == .double(7))
        #expect(row["SASSuccess"] == .int64(1) && row["SASClientOtherError"] == .int64(1))
        #expect(row["PercentSuccess"] == .double(50))
    }
}
