import AzseedTestSupport
import AzureStorage
import Foundation
import PropertyBased
import Testing

@testable import SeedKit

/// `unique: true`, a date field's own window and `round:` — what real schemas need and what
/// `azseed scan` writes: distinct values by construction (each entity's from its generation
/// index, so more entities never change the first ones'), dates in their own range, doubles
/// with the decimals asked for.
@Suite struct UniqueWindowRoundTests {
    func dataset(_ yaml: String) throws -> Dataset {
        let folder = try Scratch.folder("unique")
        try yaml.write(to: folder.appendingPathComponent("dataset.yaml"), atomically: true, encoding: .utf8)
        return try Dataset.load(directory: folder)
    }

    static let yaml = """
        name: devices
        seed: 5
        window: { from: 2026-01-01, days: 10 }
        tables:
          - name: things
            kinds:
              - name: user
                partition: users
                count: 40
                key: [N]
                fields:
                  N: { sequence: 1 }
                  Email: { pick: [a@x.io, b@x.io, c@x.io, d@x.io, e@x.io, f@x.io, g@x.io, h@x.io, i@x.io, j@x.io, k@x.io, l@x.io, m@x.io, n@x.io, o@x.io, p@x.io, q@x.io, r@x.io, s@x.io, t@x.io, u@x.io, v@x.io, w@x.io, x@x.io, y@x.io, z@x.io, aa@x.io, bb@x.io, cc@x.io, dd@x.io, ee@x.io, ff@x.io, gg@x.io, hh@x.io, ii@x.io, jj@x.io, kk@x.io, ll@x.io, mm@x.io, nn@x.io], unique: true }
                  Badge: { int: [1000, 1100], unique: true }
                  Joined: { date: { from: 2020-03-01, to: 2020-05-01 }, resolution: day, unique: true }
                  Rating: { double: [1, 5], round: 1 }
              - name: reading
                partition: readings
                count: 300
                key: [Device, At]
                fields:
                  Device: { pick: [d1, d2, d3] }
                  At: { date: window, resolution: minute }
                  Serial: { int: [1, 400], unique: true }
                  Seen: { date: { from: 2019-01-01, days: 30 }, resolution: second }
        """

    static func make(_ dataset: Dataset, counts: [String: Int] = [:]) throws -> [GeneratedEntity] {
        var options = TestSupport.options()
        options.counts = counts
        return try TestSupport.entities(try GeneratedDataset.make(dataset, options: options).tables[0])
    }

    @Test func uniqueFieldsAreDistinctWindowsHoldAndRoundingRounds() throws {
        let all = try Self.make(try dataset(Self.yaml))
        let users = all.filter { $0.partitionKey == "users" }
        let readings = all.filter { $0.partitionKey == "readings" }
        #expect(users.count == 40 && readings.count == 300)
        // Forty e-mails for forty users: each once (the vocabulary exactly holds the count).
        #expect(Set(users.compactMap { $0["Email"] }).count == 40)
        #expect(Set(users.compactMap { $0["Badge"] }).count == 40)
        #expect(Set(users.compactMap { $0["Joined"] }).count == 40)
        // A key-space kind: unique by the place of its key in the draw.
        #expect(Set(readings.compactMap { $0["Serial"] }).count == 300)
        // Each date field in its own window — not the dataset's, not --from/--to's.
        let (from, to) = (EdmDateTime(iso8601: "2020-03-01")!, EdmDateTime(iso8601: "2020-05-01")!)
        #expect(users.allSatisfy { if case .dateTime(let d)? = $0["Joined"] { d >= from && d < to } else { false } })
        let (seenFrom, seenTo) = (EdmDateTime(iso8601: "2019-01-01")!, EdmDateTime(iso8601: "2019-01-31")!)
        #expect(readings.allSatisfy { if case .dateTime(let d)? = $0["Seen"] { d >= seenFrom && d < seenTo } else { false } })
        let window = TestSupport.pinnedWindow
        #expect(readings.allSatisfy { if case .dateTime(let d)? = $0["At"] { d >= window.from && d < window.to } else { false } })
        // One decimal place.
        #expect(users.allSatisfy { e in (e["Rating"]?.text.split(separator: ".").dropFirst().first?.count ?? 0) <= 1 })
        #expect(users.allSatisfy { if case .double(let x)? = $0["Rating"] { x >= 1 && x <= 5 } else { false } })
    }

    @Test func moreEntitiesNeverChangeTheFirstOnesUniqueValues() async throws {
        let loaded = try dataset(
            Self.yaml.replacingOccurrences(of: "count: 40", with: "count: 10").replacingOccurrences(of: "[1000, 1100]", with: "[1, 1000000]"))
        await propertyCheck(input: Gen.int(in: 1...30)) { extra in
            let few = try! Self.make(loaded, counts: ["user": 10])
            let more = try! Self.make(loaded, counts: ["user": 10 + extra])
            func byN(_ entities: [GeneratedEntity]) -> [EdmValue: EdmValue] {
                Dictionary(uniqueKeysWithValues: entities.filter { $0.partitionKey == "users" }.map { ($0["N"]!, $0["Badge"]!) })
            }
            let a = byN(few)
            let b = byN(more)
            #expect(a.allSatisfy { b[$0.key] == $0.value })
            #expect(Set(b.values).count == b.count)
        }
    }

    @Test func aVocabularyTooSmallOrAUniqueThatCannotBeIsOneClearError() throws {
        let loaded = try dataset(Self.yaml)
        var options = TestSupport.options()
        options.counts = ["user": 41]
        do {
            _ = try GeneratedDataset.make(loaded, options: options)
            Issue.record("41 users from 40 e-mails was accepted")
        } catch {
            #expect("\(error)".contains("Email") && "\(error)".contains("holds 40 distinct values for 41 entities"), "\(error)")
        }
        TestSupport.expectRefused(
            Self.yaml,
            [
                ("Rating: { double: [1, 5], round: 1 }", "Rating: { double: [1, 5], unique: true }", "unique applies to pick"),
                ("Rating: { double: [1, 5], round: 1 }", "Rating: { int: [1, 5], round: 1 }", "'round' applies only to a double"),
                ("Rating: { double: [1, 5], round: 1 }", "Rating: { double: [1, 5], round: 16 }", "0 to 15"),
                ("Rating: { double: [1, 5], round: 1 }", "Rating: { double: [-1.7976931348623157e308, 1.7976931348623157e308] }", "too wide"),
                ("Rating: { double: [1, 5], round: 1 }", "Rating: { double: [1e300, 1.7e308], round: 15 }", "no 15 decimal places"),
                ("{ from: 2020-03-01, to: 2020-05-01 }", "{ from: 2020-05-01, to: 2020-03-01 }", "is not before"),
                ("{ from: 2020-03-01, to: 2020-05-01 }", "{ to: 2020-05-01 }", "needs 'from'"),
                ("{ from: 2020-03-01, to: 2020-05-01 }", "{ from: soon, to: 2020-05-01 }", "is not a date"),
                ("Badge: { int: [1000, 1100], unique: true }", "Badge: { int: [1000, 1100], unique: maybe }", "true or false"),
            ]
        ) { edited in _ = try GeneratedDataset.make(try dataset(edited), options: TestSupport.options()) }
    }

    @Test func theIndexPermutationIsABijection() async {
        await propertyCheck(input: zip(Gen.int(in: 1...3000), Gen.uint64())) { size, seed in
            let p = IndexPermutation(size: UInt64(size), seed: seed)
            let images = (0..<UInt64(size)).map { p($0) }
            #expect(Set(images).count == size)
            #expect(images.allSatisfy { $0 < UInt64(size) })
        }
        let huge = IndexPermutation(size: .max, seed: 1)
        #expect(huge(UInt64.max - 1) < .max)
    }

    @Test func aFilesFolderBecomesBlobsNamedByTheirPaths() throws {
        let folder = try Scratch.folder("files")
        let files = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: files.appendingPathComponent("a"), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: files.appendingPathComponent("a/b.json"))
        try Data("x,y\n".utf8).write(to: files.appendingPathComponent("c.csv"))
        try Data("hidden".utf8).write(to: files.appendingPathComponent(".hidden"))
        try """
        name: withfiles
        window: { from: 2026-01-01, days: 1 }
        containers:
          - { name: docs, files: data }
        tables:
          - { name: things, kinds: [ { name: k, partition: p, key: [N], count: 1, fields: { N: { sequence: 1 } } } ] }
        """.write(to: folder.appendingPathComponent("dataset.yaml"), atomically: true, encoding: .utf8)
        let made = try GeneratedDataset.make(try Dataset.load(directory: folder), options: TestSupport.options())
        #expect(made.containers[0].blobs.map(\.name) == ["a/b.json", "c.csv"])
        #expect(made.containers[0].blobs.map(\.contentType) == ["application/json", "text/csv"])
        try Data().write(to: files.appendingPathComponent("empty.txt"))
        #expect(throws: GenerationError.self) { try GeneratedDataset.make(try Dataset.load(directory: folder), options: TestSupport.options()) }
    }

    @Test func aDateAfterAReferencedEntitysDateStaysWithinIt() throws {
        let indent = String(repeating: " ", count: 10)
        let yaml = Self.yaml.replacingOccurrences(
            of: indent + "Seen: { date: { from: 2019-01-01, days: 30 }, resolution: second }",
            with: [
                "user: { ref: user }", "UserKey: { from: user.RowKey }",
                "Followup: { date: { after: user.Joined, within: 12h }, resolution: minute }",
            ].map { indent + $0 }.joined(separator: "\n"))
        #expect(yaml != Self.yaml)
        let all = try Self.make(try dataset(yaml))
        let users = Dictionary(uniqueKeysWithValues: all.filter { $0.partitionKey == "users" }.map { ($0.rowKey, $0) })
        let readings = all.filter { $0.partitionKey == "readings" }
        #expect(readings.count == 300)
        for reading in readings {
            guard case .string(let key)? = reading["UserKey"], case .dateTime(let joined)? = users[key]?["Joined"],
                case .dateTime(let followup)? = reading["Followup"]
            else {
                Issue.record("missing values")
                return
            }
            #expect(followup >= joined && followup.ticks - joined.ticks < 12 * 3600 * EdmDateTime.ticksPerSecond)
        }
        TestSupport.expectRefused(
            yaml,
            [
                ("within: 12h", "within: 12y", "not a duration"),
                ("after: user.Joined", "after: nobody.Joined", "not a ref field"),
                ("after: user.Joined", "after: user.Missing", "no stored property"),
                ("after: user.Joined", "after: user.Badge", "no date there"),
                ("within: 12h }, resolution: minute", "within: 30s }, resolution: minute", "shorter than the resolution"),
            ]
        ) { edited in _ = try GeneratedDataset.make(try dataset(edited), options: TestSupport.options()) }
    }

    @Test func fakeNamesAddressesAndPhonesLookRealAndStayUnique() throws {
        let indent = String(repeating: " ", count: 10)
        let yaml = Self.yaml.replacingOccurrences(
            of: indent + "Rating: { double: [1, 5], round: 1 }",
            with: [
                "Rating: { double: [1, 5], round: 1 }", "Person: { fake: name, unique: true }",
                "Address: { fake: email, of: Person, domain: fleet.example }", "Phone: { fake: phone, unique: true }",
                "Other: { fake: email }", "Caller: { fake: phone }",
            ].map { indent + $0 }.joined(separator: "\n"))
        #expect(yaml != Self.yaml)
        let users = try Self.make(try dataset(yaml)).filter { $0.partitionKey == "users" }
        #expect(users.count == 40)
        #expect(Set(users.compactMap { $0["Person"] }).count == 40)
        #expect(Set(users.compactMap { $0["Phone"] }).count == 40)
        for user in users {
            let person = user["Person"]?.text ?? ""
            let parts = person.split(separator: " ").map(String.init)
            #expect(parts.count == 2 && Vocabulary.givenNames.contains(parts[0]) && Vocabulary.familyNames.contains(parts[1]))
            #expect(user["Address"]?.text == "\(parts[0].lowercased()).\(parts[1].lowercased())@fleet.example")
            #expect(user["Phone"]?.text.wholeMatch(of: /\+1 555 \d{3} \d{4}/) != nil)
            #expect(user["Other"]?.text.hasSuffix("@example.com") == true)
        }
        #expect(try Self.make(try dataset(yaml)).filter { $0.partitionKey == "users" }.map { $0["Person"] } == users.map { $0["Person"] })
        TestSupport.expectRefused(
            yaml,
            [
                ("fake: name, unique", "fake: person, unique", "fake is name, email or phone"),
                ("of: Person, domain", "of: Nobody, domain", "not a column or field defined before it"),
                ("domain: fleet.example", "domain: fleet", "not a domain name"),
                ("Other: { fake: email }", "Other: { fake: email, of: Person, unique: true }", "as unique as 'Person'"),
                ("Caller: { fake: phone }", "Caller: { fake: phone, domain: x.io }", "applies only to fake: email"),
            ]
        ) { edited in _ = try GeneratedDataset.make(try dataset(edited), options: TestSupport.options()) }
    }
}
