import AzseedTestSupport
import AzureStorage
import Foundation
import PropertyBased
import Testing

@testable import SeedKit

/// `pick` with `weights`, `presence`, and `~` row cells: what `azseed scan` writes to keep
/// observed frequencies and optional properties.
@Suite struct OptionalAndWeightedTests {
    func dataset(_ yaml: String) throws -> Dataset {
        let folder = try Scratch.folder("optional")
        try yaml.write(to: folder.appendingPathComponent("dataset.yaml"), atomically: true, encoding: .utf8)
        return try Dataset.load(directory: folder)
    }

    let yaml = """
        name: shapes
        seed: 3
        window: { from: 2026-01-01, days: 10 }
        tables:
          - name: things
            kinds:
              - name: colour
                partition: colours
                key: [Name]
                rows:
                  - { Name: red, Hex: "#f00" }
                  - { Name: white, Hex: ~ }
              - name: thing
                partition: things
                count: 2000
                key: [N]
                fields:
                  N: { sequence: 1 }
                  Size: { pick: [small, large], weights: [9, 1] }
                  Note: { pick: [a, b], presence: 0.25 }
        """

    @Test func weightsAndPresenceShapeTheEntities() throws {
        let made = try GeneratedDataset.make(try dataset(yaml), options: TestSupport.options())
        let all = try TestSupport.entities(made.tables[0])
        let things = all.filter { $0.partitionKey == "things" }
        #expect(things.count == 2000)
        let small = things.filter { $0["Size"] == .string("small") }.count
        #expect((1700...1900).contains(small), "weights 9:1 gave \(small) of 2000 small")
        let withNote = things.filter { $0["Note"] != nil }.count
        #expect((400...600).contains(withNote), "presence 0.25 gave \(withNote) of 2000")
        // Every entity keeps its other properties.
        #expect(things.allSatisfy { $0["N"] != nil && $0["Size"] != nil })
        let colours = all.filter { $0.partitionKey == "colours" }
        #expect(colours.first { $0["Name"] == .string("red") }?["Hex"] == .string("#f00"))
        #expect(colours.first { $0["Name"] == .string("white") }.map { $0.names } == ["Name"])
        // Deterministic: the same again.
        let again = try TestSupport.entities(try GeneratedDataset.make(try dataset(yaml), options: TestSupport.options()).tables[0])
        #expect(again.map(\.names) == all.map(\.names) && again.map(\.values) == all.map(\.values))
    }

    @Test func presenceOnAFieldChangesNoOtherValue() throws {
        let without = yaml.replacingOccurrences(of: ", presence: 0.25", with: "")
        let a = try TestSupport.entities(try GeneratedDataset.make(try dataset(yaml), options: TestSupport.options()).tables[0])
        let b = try TestSupport.entities(try GeneratedDataset.make(try dataset(without), options: TestSupport.options()).tables[0])
        #expect(a.map { $0["Size"] } == b.map { $0["Size"] })
        #expect(zip(a, b).allSatisfy { x, y in x["Note"] == nil || x["Note"] == y["Note"] })
    }

    @Test func badWeightsPresenceAndAbsentKeysAreOneLocatedError() throws {
        let cases = [
            ("Size: { pick: [small, large], weights: [9, 1] }", "Size: { pick: [small, large], weights: [9] }", "give one weight per value"),
            ("Size: { pick: [small, large], weights: [9, 1] }", "Size: { pick: [small, large], weights: [0, 0] }", "add up to at least 1"),
            ("Size: { pick: [small, large], weights: [9, 1] }", "Size: { int: [1, 5], weights: [1] }", "applies only to a pick field"),
            ("Note: { pick: [a, b], presence: 0.25 }", "Note: { pick: [a, b], presence: 1.5 }", "above 0 and at most 1"),
            ("N: { sequence: 1 }", "N: { sequence: 1, presence: 0.5 }", "key field 'N' is on every entity"),
            ("{ Name: white, Hex: ~ }", "{ Name: ~, Hex: x }", "key column 'Name' cannot be ~"),
            ("key: [N]", "key: [N, Size]", "key field 'Size' is a pick with weights"),
        ]
        for (from, to, expected) in cases {
            #expect(throws: DatasetError.self, "\(to)") { try dataset(yaml.replacingOccurrences(of: from, with: to)) }
            do { _ = try dataset(yaml.replacingOccurrences(of: from, with: to)) } catch {
                #expect("\(error)".contains(expected) && "\(error)".contains("dataset.yaml:"), "\(error)")
            }
        }
    }

    @Test func exactWeightsDealEachValueAsOftenAsItsWeightByIndex() async throws {
        let exact = yaml.replacingOccurrences(
            of: "Size: { pick: [small, large], weights: [9, 1] }", with: "Size: { pick: [small, large, huge], weights: [5, 2, 1], exact: true }")
        #expect(exact != yaml)
        let loaded = try dataset(exact)
        func sizes(_ count: Int) throws -> [EdmValue: EdmValue] {
            var options = TestSupport.options()
            options.counts = ["thing": count]
            let things = try TestSupport.entities(try GeneratedDataset.make(loaded, options: options).tables[0]).filter {
                $0.partitionKey == "things"
            }
            return Dictionary(uniqueKeysWithValues: things.map { ($0["N"]!, $0["Size"]!) })
        }
        // Every run of 8 entities holds 5 small, 2 large, 1 huge.
        let eight = try sizes(8)
        #expect(eight.values.filter { $0 == .string("small") }.count == 5)
        #expect(eight.values.filter { $0 == .string("large") }.count == 2)
        #expect(eight.values.filter { $0 == .string("huge") }.count == 1)
        let forty = try sizes(40)
        #expect(forty.values.filter { $0 == .string("huge") }.count == 5)
        // By index: more entities keep the first ones' values.
        await propertyCheck(input: Gen.int(in: 1...30)) { extra in
            let more = try! sizes(8 + extra)
            #expect(eight.allSatisfy { more[$0.key] == $0.value })
        }
        TestSupport.expectRefused(
            exact, [("weights: [5, 2, 1], exact: true", "exact: true", "'exact' applies only to a pick with weights")]
        ) { edited in _ = try GeneratedDataset.make(try dataset(edited), options: TestSupport.options()) }
    }
}
