import AzureStorage
import Foundation
import Testing

@testable import StorageEmulator

@Suite struct FilterTests {
    let event = TableEntity(
        partitionKey: "Events", rowKey: "r1",
        properties: [
            "EventName": .string("O'Brien Meetup"), "Count": .int32(5), "Big": .int64(1_099_511_627_776), "Score": .double(2.5),
            "Pinned": .boolean(true), "EventDate": .dateTime(EdmDateTime(iso8601: "2026-03-01T10:00:00Z")!),
            "Id": .guid(UUID(uuidString: "12345678-1234-5678-1234-567812345678")!), "Blob": .binary([0xAB, 0x01]),
        ])

    private func matches(_ text: String) throws -> Bool { try FilterParser.parse(text).matches(event) }

    @Test func comparisonsOverEveryType() throws {
        #expect(try matches("PartitionKey eq 'Events'"))
        #expect(try matches("EventName eq 'O''Brien Meetup'"))
        #expect(try matches("Count ge 5 and Count lt 6"))
        #expect(try matches("Big eq 1099511627776L"))
        #expect(try matches("Score gt 2.0"))
        #expect(try matches("Pinned eq true") && matches("Pinned"))
        #expect(try matches("EventDate ge datetime'2026-03-01T00:00:00Z' and EventDate lt datetime'2026-03-02T00:00:00.0000000Z'"))
        #expect(try matches("Id eq guid'12345678-1234-5678-1234-567812345678'"))
        #expect(try matches("Blob eq X'ab01'") && matches("Blob eq binary'AB01'"))
        #expect(try matches("RowKey gt 'r0' and RowKey le 'r1'"))
    }

    /// From an attacker's review: a query resumed with `RowKey gt '…'` went on elsewhere than
    /// the listing stopped when keys held characters above U+FFFF and in U+E000–U+FFFF (the
    /// filter compared UTF-16 units, the listing bytes): a migration killed and resumed left
    /// 10,732 entities unchanged and said it was applied. Both now use the bytes.
    @Test func stringsCompareInTheOrderKeysAreListedIn() throws {
        let keys = ["a", "a\u{E000}", "a\u{FF01}", "a\u{1F600}", "a\u{10000}z", "\u{FF01}z", "\u{1F600}"]
        let listed = keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for (i, key) in listed.enumerated() {
            let filter = try FilterParser.parse("RowKey gt '\(key)'")
            let after = listed.filter { filter.matches(TableEntity(partitionKey: "p", rowKey: $0)) }
            #expect(after == Array(listed[(i + 1)...]), "RowKey gt '\(key)'")
        }
    }

    @Test func typesMustMatchAndMissingPropertiesNeverMatch() throws {
        #expect(try !matches("Big eq 1099511627776.0"))
        #expect(try !matches("Count eq 5L"))
        #expect(try !matches("Missing eq 'x'"))
        #expect(try matches("not (Missing eq 'x')"))
        #expect(try !matches("Count eq '5'"))
    }

    @Test func precedenceAndGrouping() throws {
        #expect(try matches("Count eq 1 or Count eq 5 and Pinned eq true"))
        #expect(try !matches("(Count eq 1 or Count eq 5) and Pinned eq false"))
        #expect(try matches("not Count eq 1"))
        #expect(try FilterParser.parse("a eq 1 and (b eq 2 or c eq 3)").comparisonCount == 3)
    }

    @Test func whatTheClientBuildsTheEmulatorReads() throws {
        let built: TableFilter = .and(
            .equal("EventName", .string("O'Brien Meetup")), .or(.compare("Big", .ge, .int64(5)), .compare("EventDate", .lt, .dateTime(.minimum))))
        #expect(try matches(built.description))
    }

    @Test func syntaxErrorsAreLocated() {
        for bad in [
            "Count eq", "Count eq 'open", "(Count eq 1", "Count eq 99999999999", "Count eq datetime'yesterday'", "Count eq 1 )", "Count == 1",
        ] {
            #expect(throws: FilterSyntaxError.self, "\(bad)") { try FilterParser.parse(bad) }
        }
    }
}
