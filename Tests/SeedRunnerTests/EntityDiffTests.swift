import AzureStorage
import SeedKit
import Testing

@testable import SeedRunner

/// How `migrate plan` shows a changed value (a new user's note: two long addresses, each cut at
/// 60 characters, read as if `.jp` had become `.jpg`).
@Suite struct EntityDiffTests {
    @Test func longTextsAreShownFromWhereTheyDiffer() {
        let before = TableEntity(
            partitionKey: "speakers", rowKey: "1",
            properties: ["ImageUrl": .string("http://127.0.0.1:10000/devstoreaccount1/speakers/BJohnson.jpg")])
        var after = before
        after["ImageUrl"] = .string("http://127.0.0.1:10000/devstoreaccount1/photos/BJohnson.jpg")
        let diff = EntityDiff(before: before, outcome: .replaced(after))
        #expect(
            diff.lines == ["~ ImageUrl: String '…00/devstoreaccount1/speakers/BJohnson.jpg' -> String '…00/devstoreaccount1/photos/BJohnson.jpg'"])
    }

    @Test func shortTextsAreShownWhole() {
        let before = TableEntity(partitionKey: "p", rowKey: "1", properties: ["Name": .string("a")])
        var after = before
        after["Name"] = .string("b")
        #expect(EntityDiff(before: before, outcome: .replaced(after)).lines == ["~ Name: String 'a' -> String 'b'"])
    }

    @Test func aLongTailIsStillCut() {
        let before = TableEntity(partitionKey: "p", rowKey: "1", properties: ["Text": .string("x" + String(repeating: "y", count: 100))])
        var after = before
        after["Text"] = .string("z" + String(repeating: "y", count: 100))
        let line = EntityDiff(before: before, outcome: .replaced(after)).lines[0]
        #expect(line == "~ Text: String 'x\(String(repeating: "y", count: 59))…' -> String 'z\(String(repeating: "y", count: 59))…'")
    }
}
