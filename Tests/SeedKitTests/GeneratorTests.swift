import AzureStorage
import Testing

@testable import SeedKit

@Suite struct GeneratorTests {
    let dataset: Dataset

    init() throws { dataset = try Dataset.load(directory: TestSupport.speakeasy) }

    private func events(_ options: GenerationOptions) throws -> [GeneratedEntity] {
        try TestSupport.entities(try GeneratedDataset.make(dataset, options: options).tables[0]).filter { $0.partitionKey == "Events" }
    }

    @Test func makesExactlyTheRequestedNumberOfEvents() throws {
        for n in [1, 100, 2_500] {
            #expect(try events(TestSupport.options(events: n)).count == n)
        }
    }

    @Test func everyNameLocationAndSpeakerCanBeDrawn() throws {
        // The original's Random.Next(0, n - 1) never drew the last entry of any list.
        let made = try events(TestSupport.options(events: 2_000))
        #expect(Set(made.compactMap { $0["EventName"]?.text }).count == 6)
        #expect(Set(made.compactMap { $0["EventLocation"]?.text }).count == 8)
        #expect(Set(made.compactMap { $0["SpeakerName"]?.text }).count == 8)
        #expect(made.contains { $0["EventName"]?.text == "SharePoint Saturdays" })
        #expect(made.contains { $0["EventLocation"]?.text == "New York City, NY" })
        #expect(made.contains { $0["SpeakerName"]?.text == "Ela Gardner" })
    }

    @Test func noTwoEventsShareANaturalKey() throws {
        let made = try events(TestSupport.options(events: 5_000))
        let keys = made.map { e in ["EventName", "EventLocation", "SpeakerKey", "EventDate"].map { e[$0]!.text }.joined(separator: "|") }
        #expect(Set(keys).count == made.count)
        #expect(Set(made.map(\.rowKey)).count == made.count)
    }

    @Test func everyDateIsInsideTheWindowAtMinuteResolution() throws {
        let made = try events(TestSupport.options(events: 3_000))
        for e in made {
            guard case .dateTime(let d)? = e["EventDate"] else {
                Issue.record("EventDate is not an Edm.DateTime")
                continue
            }
            #expect(d >= TestSupport.pinnedWindow.from && d < TestSupport.pinnedWindow.to)
            #expect(d.ticks % EdmDateTime.ticksPerMinute == 0)
        }
    }

    @Test func theWholeKeySpaceCanBeDrawnAndNoMore() throws {
        // One hour holds 60 minutes × 6 names × 8 locations × 8 speakers = 23,040 keys.
        var options = TestSupport.options(events: 23_040)
        options.from = EdmDateTime(iso8601: "2026-01-01T10:00:00Z")
        options.to = EdmDateTime(iso8601: "2026-01-01T11:00:00Z")
        let all = try events(options)
        #expect(all.count == 23_040)
        #expect(Set(all.map(\.rowKey)).count == 23_040)
        options.counts = ["event": 23_041]
        #expect(throws: GenerationError.self) { try events(options) }
    }

    @Test func speakerRowsMatchTheOriginalProgram() throws {
        let speakers = try TestSupport.entities(try GeneratedDataset.make(dataset, options: TestSupport.options()).tables[0])
            .filter { $0.partitionKey == "speakers" }
        #expect(speakers.count == 8)
        let bart = try #require(speakers.first { $0["Name"]?.text == "Bart Tubalinal" })
        #expect(bart["Title"]?.text == "Solutions Architect")
        #expect(bart["Bio"]?.text.hasPrefix("Bart Tubalinal is a Solutions Architect in the Lorem ipsum") == true)
        #expect(bart["ImageUrl"]?.text == "http://127.0.0.1:10000/devstoreaccount1/speakers/BTubalinal.jpg")
        #expect(bart["Image"] == nil)
        #expect(Set(bart.names) == ["Bio", "ImageUrl", "Name", "Title"])
    }

    @Test func eventsPointAtTheirSpeaker() throws {
        let all = try TestSupport.entities(try GeneratedDataset.make(dataset, options: TestSupport.options()).tables[0])
        let speakers = Dictionary(uniqueKeysWithValues: all.filter { $0.partitionKey == "speakers" }.map { ($0.rowKey, $0["Name"]!.text) })
        for event in all where event.partitionKey == "Events" {
            #expect(speakers[event["SpeakerKey"]!.text] == event["SpeakerName"]!.text)
        }
    }

    @Test func outputIsSortedByPartitionThenRowKey() throws {
        let all = try TestSupport.entities(try GeneratedDataset.make(dataset, options: TestSupport.options(events: 500)).tables[0])
        let keys = all.map { [$0.partitionKey, $0.rowKey] }
        #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) { $0.utf8.lexicographicallyPrecedes($1.utf8) } })
    }

    @Test func addingAnUnrelatedKindChangesNoExistingValue() throws {
        let copy = try TestSupport.copyOfSpeakEasy()
        let before = try TestSupport.entities(try GeneratedDataset.make(try Dataset.load(directory: copy), options: TestSupport.options()).tables[0])
        try TestSupport.edit(copy.appendingPathComponent("dataset.yaml")) {
            $0.replacingOccurrences(
                of: "      - name: event\n",
                with: """
                          - name: sponsor
                            partition: sponsors
                            count: 5
                            key: [Code]
                            fields:
                              Code: { int: [1, 1000] }
                              Level: { pick: [gold, silver] }
                          - name: event

                    """)
        }
        let after = try TestSupport.entities(try GeneratedDataset.make(try Dataset.load(directory: copy), options: TestSupport.options()).tables[0])
        #expect(after.filter { $0.partitionKey == "sponsors" }.count == 5)
        let kept = after.filter { $0.partitionKey != "sponsors" }
        #expect(kept.map(\.rowKey) == before.map(\.rowKey))
        #expect(kept.map(\.values) == before.map(\.values))
    }

    @Test func theChatDatasetWorksWithNoCode() throws {
        let chat = try GeneratedDataset.make(try Dataset.load(directory: TestSupport.chat), options: TestSupport.options())
        #expect(chat.tables.map(\.name) == ["rooms", "users", "messages"])
        #expect(chat.tables.map(\.entityCount) == [4, 25, 500])
        let users = try TestSupport.entities(chat.tables[1])
        let userIds = Set(users.map { $0["UserId"]! })
        for message in try TestSupport.entities(chat.tables[2]) {
            #expect(userIds.contains(message["UserId"]!))
            #expect(message["Text"]!.text.hasSuffix("\(message["Author"]!.text) here."))
        }
        #expect(users.map { $0["UserId"]! }.contains(.int64(1000)))
    }
}
