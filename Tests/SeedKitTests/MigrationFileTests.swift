import AzseedTestSupport
import AzureStorage
import Foundation
import PropertyBased
import Testing

@testable import SeedKit

/// Migration files: names and version order, validation in full before anything runs, the
/// checksum of the bytes, and each operation as a pure function of the entity.
@Suite struct MigrationFileTests {
    static func folder(_ files: [String: String]) throws -> URL {
        let folder = try Scratch.folder("migrations")
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        return folder
    }

    static let rename = "description: rename\noperations:\n  - rename-property: {table: events, from: A, to: B}\n"

    @Test func versionsOrderNumericallyAndOneVersionIsOneFile() throws {
        let set = try MigrationSet.load(
            try Self.folder(["V10__ten.yaml": Self.rename, "V2__two.yaml": Self.rename, "V2.1__two_one.yml": Self.rename]))
        #expect(set.migrations.map(\.version.canonical) == ["2", "2.1", "10"])
        #expect(MigrationVersion("1.0") == MigrationVersion("1") && MigrationVersion("1.0")!.canonical == "1")
        #expect(MigrationVersion("1.10")! > MigrationVersion("1.9")!)
        for bad in ["", "1.", ".1", "a", "1..2", "-1", "1.2.3.4.5.6.7.8.9", String(repeating: "9", count: 19)] {
            #expect(MigrationVersion(bad) == nil, "\(bad)")
        }
        #expect(throws: DatasetError.self) { try MigrationSet.load(try Self.folder(["V1__a.yaml": Self.rename, "V1.0__b.yaml": Self.rename])) }
        // A YAML file that is not named as a migration would be skipped without a word: refused.
        #expect(throws: DatasetError.self) { try MigrationSet.load(try Self.folder(["V1__a.yaml": Self.rename, "v2_b.yaml": Self.rename])) }
        // Other files (a README) are not migrations.
        #expect(try MigrationSet.load(try Self.folder(["V1__a.yaml": Self.rename, "README.md": "x"])).migrations.count == 1)
    }

    @Test func anyChangeToTheBytesChangesTheChecksum() throws {
        let a = try MigrationSet.load(try Self.folder(["V1__a.yaml": Self.rename])).migrations[0]
        let b = try MigrationSet.load(try Self.folder(["V1__a.yaml": Self.rename + "# a comment\n"])).migrations[0]
        #expect(a.checksum.count == 64 && a.checksum != b.checksum)
    }

    /// Every mistake is one located error, before any operation runs.
    @Test func filesAreValidatedInFull() throws {
        let cases: [(String, String)] = [
            ("  - rename-property: {table: events, from: PartitionKey, to: B}", "system property"),
            ("  - rename-property: {table: events, from: A, to: A}", "the same name"),
            ("  - rename-properties: {table: events, from: A, to: B}", "unknown operation"),
            ("  - rename-property: {table: events, from: A, to: B, colour: red}", "unknown key 'colour'"),
            ("  - rename-property: {table: azseedledger, from: A, to: B}", "ledger"),
            ("  - rename-property: {table: 'bad name', from: A, to: B}", "table 'bad name'"),
            ("  - rename-property: {table: events, where: \"PartitionKey eq\", from: A, to: B}", "OData filter"),
            (
                "  - rename-property: {table: events, where: \"\(Array(repeating: "A eq 1", count: 13).joined(separator: " or "))\", from: A, to: B}",
                "13 comparisons"
            ),
            ("  - set-property: {table: events, name: N}", "one of 'value' or 'template'"),
            ("  - set-property: {table: events, name: N, value: abc, type: Int32}", "is not an Int32"),
            ("  - set-property: {table: events, name: N, template: '{{#a}}'}", "template"),
            ("  - retype-property: {table: events, name: N, to: Binary}", "is not one of"),
            ("  - map-values: {table: events, name: N, map: {a: b, b: c}}", "'b' is mapped from and to"),
            // From an attacker's review: "02" is stored as 2 in a whole-number property, a key.
            ("  - map-values: {table: events, name: N, map: {\"1\": \"02\", \"2\": \"3\"}}", "'2' is mapped from and to"),
            ("  - map-values: {table: events, name: N, map: {}}", "map is empty"),
            ("  - map-values: {table: events, name: N, map: {a: b}, otherwise: drop}", "otherwise 'drop' is not keep or fail"),
            ("  - map-values: {table: events, name: N, map: {a: [b]}}", "must be a single value"),
            ("  - split-property: {table: events, name: N, separator: ',', into: [A]}", "at least two"),
            ("  - split-property: {table: events, name: N, separator: ',', into: [N, B]}", "both read and written"),
            ("  - split-property: {table: events, name: N, separator: ',', into: [A, A]}", "names 'A' twice"),
            ("  - split-property: {table: events, name: N, separator: ',', into: [A, RowKey]}", "system property"),
            ("  - join-properties: {table: events, names: [A, B], into: C}", "missing 'separator'"),
            ("  - lookup: {table: events, name: N, from-table: azseedledger, partition: p, row: r, property: P}", "from-table 'azseedledger'"),
            ("  - lookup: {table: events, name: N, from-table: cities, partition: p, row: r, property: P, if-missing: always}", "not fail or skip"),
            ("  - lookup: {table: events, name: N, from-table: cities, partition: p, property: P}", "missing 'row'"),
            ("  - lookup: {table: events, name: N, from-table: events, partition: p, row: r, property: N}", "in its own table"),
            ("  - compute: {table: events, name: N, expression: 'N +'}", "expression: the expression ends"),
            ("  - join-properties: {table: events, names: [A, B], separator: ',', into: A}", "both read and written"),
            ("  - retype-property: {table: events, name: N, to: Int32, on-failure: ignore}", "on-failure"),
            ("  - delete-entities: {table: events}", "needs 'where'"),
            ("  - rekey: {table: events}", "takes 'partition', 'row' or both"),
            ("  - undo-everything: {table: events}", "unknown operation 'undo-everything'"),
            ("  - move-blobs: {container: photos, prefix: a/, to-container: photos, to-prefix: a/b/}", "overlap"),
            ("  - move-blobs: {container: photos, prefix: a/, to-container: azseedledger, to-prefix: a/}", "azseed's own container"),
            ("  - move-blobs: {container: photos, to-container: other, to-prefix: a/}", "missing 'prefix'"),
            ("  - set-blob-properties: {container: photos, prefix: a/}", "changes nothing"),
            ("  - set-blob-properties: {container: photos, prefix: a/, metadata: {'bad name': x}}", "metadata name"),
            ("  - delete-blobs: {container: Photos, prefix: a/}", "container 'Photos'"),
            ("  - copy-table: {from: events, to: Events}", "the same table"),
            // From an attacker's review: caught only mid-apply, after the container was made.
            ("  - move-blobs: {container: speakers, prefix: \"\", to-container: photos, to-prefix: ../azseedledger/}", "'..' segment"),
            ("  - copy-table: {from: events, to: azseedledger}", "ledger"),
        ]
        for (operation, says) in cases {
            let folder = try Self.folder(["V1__a.yaml": "description: d\noperations:\n\(operation)\n"])
            do {
                _ = try MigrationSet.load(folder)
                Issue.record("accepted: \(operation)")
            } catch {
                #expect(error.description.contains(says) && error.line != nil, "\(operation): \(error.description)")
            }
        }
    }

    @Test func valuesAreTypedAsWrittenOrAsTold() throws {
        let text = """
            description: d
            operations:
              - set-property: {table: things, name: A, value: 100}
              - set-property: {table: things, name: B, value: "100"}
              - set-property: {table: things, name: C, value: 5000000000}
              - set-property: {table: things, name: D, value: 1.5}
              - set-property: {table: things, name: E, value: true}
              - set-property: {table: things, name: F, value: 7, type: Int64}
            """
        let operations = try MigrationSet.load(try Self.folder(["V1__a.yaml": text])).migrations[0].operations
        let values: [EdmValue] = operations.compactMap {
            guard case .entities(let step) = $0, case .setProperty(_, .value(let value), _) = step.change else { return nil }
            return value
        }
        #expect(values == [.int32(100), .string("100"), .int64(5_000_000_000), .double(1.5), .boolean(true), .int64(7)])
    }

    @Test func stepsArePureFunctionsOfTheEntity() {
        let entity = TableEntity(partitionKey: "p", rowKey: "r", properties: ["A": .string("Hall"), "N": .string("42"), "X": .int64(1 << 40)])
        #expect(
            EntityChange.renameProperty(from: "A", to: "B").apply(to: entity)
                == .replaced(
                    TableEntity(partitionKey: "p", rowKey: "r", properties: ["B": .string("Hall"), "N": .string("42"), "X": .int64(1 << 40)])))
        #expect(EntityChange.renameProperty(from: "Z", to: "B").apply(to: entity) == .unchanged)
        if case .failed = EntityChange.renameProperty(from: "A", to: "N").apply(to: entity) {
        } else {
            Issue.record("a rename onto an existing property was accepted")
        }
        #expect(
            EntityChange.retypeProperty(name: "N", to: .int32, onFailure: .fail).apply(to: entity)
                == .replaced(
                    {
                        var e = entity
                        e["N"] = .int32(42)
                        return e
                    }()))
        if case .failed = EntityChange.retypeProperty(name: "X", to: .int32, onFailure: .fail).apply(to: entity) {
        } else {
            Issue.record("a lossy retype was accepted")
        }
        #expect(EntityChange.retypeProperty(name: "X", to: .int32, onFailure: .skip).apply(to: entity) == .unchanged)
        #expect(
            EntityChange.retypeProperty(name: "X", to: .int32, onFailure: .remove).apply(to: entity)
                == .replaced(
                    {
                        var e = entity
                        e["X"] = nil
                        return e
                    }()))
        #expect(EntityChange.setProperty(name: "A", value: .value(.int32(1)), ifMissing: true).apply(to: entity) == .unchanged)
        #expect(EntityChange.deleteEntities.apply(to: entity) == .deleted)
        // By bytes: a decomposed é is not the precomposed one Swift's == would take it for.
        // map-values: by the text, typed as the old value; otherwise keep or fail; what it wrote is left.
        let map = ValueMap(pairs: [("42", "43"), ("Hall", "Room")], otherwise: .fail)
        #expect(EntityChange.mapValues(name: "N", map: map).apply(to: entity) == .replaced(entity.with("N", .string("43"))))
        #expect(EntityChange.mapValues(name: "X", map: map).apply(to: entity.with("X", .int32(42))) == .replaced(entity.with("X", .int32(43))))
        #expect(EntityChange.mapValues(name: "N", map: map).apply(to: entity.with("N", .string("43"))) == .unchanged)
        if case .failed(let why) = EntityChange.mapValues(name: "N", map: map).apply(to: entity.with("N", .string("7"))) {
            #expect(why.contains("in no mapping"))
        } else {
            Issue.record("a value in no mapping with otherwise: fail was not refused")
        }
        let typed = ValueMap(pairs: [("1099511627776", "big")], otherwise: .keep)
        guard case .failed = EntityChange.mapValues(name: "X", map: typed).apply(to: entity) else {
            Issue.record("a mapped text that is not the old value's type was written")
            return
        }
        // split-property: at the first separators, the last part taking the rest, bytes compared.
        let split = EntityChange.splitProperty(name: "A", separator: "a", into: ["B", "C"])
        #expect(
            split.apply(to: entity.with("A", .string("banana")))
                == .replaced(entity.with("A", nil).with("B", .string("b")).with("C", .string("nana"))))
        guard case .failed = split.apply(to: entity.with("A", .string("xyz"))) else {
            Issue.record("a value with too few parts was split")
            return
        }
        #expect(
            EntityChange.splitProperty(name: "A", separator: "e\u{301}", into: ["B", "C"]).apply(to: entity.with("A", .string("x\u{E9}y")))
                != .replaced(entity))
        // join-properties: all or none; the text of each, typed or not.
        let join = EntityChange.joinProperties(names: ["N", "X"], separator: "/", into: "J")
        #expect(join.apply(to: entity) == .replaced(entity.with("N", nil).with("X", nil).with("J", .string("42/1099511627776"))))
        guard case .failed = join.apply(to: entity.with("X", nil)) else {
            Issue.record("a join of some of its properties was written")
            return
        }
        // lookup: the keys from templates over the entity, the value from what was read.
        let file =
            "description: l\noperations:\n  - lookup: {table: things, name: City, from-table: cities, partition: c, row: \"{{N}}\", property: Name}\n"
        let folder = try! Scratch.folder("lookup")
        try! Data(file.utf8).write(to: folder.appendingPathComponent("V1__l.yaml"))
        guard case .entities(let unread)? = try! MigrationSet.load(folder).migrations.first?.operations.first else {
            Issue.record("no lookup step")
            return
        }
        guard case .failed = unread.change.apply(to: entity) else {
            Issue.record("a lookup whose table was not read changed an entity")
            return
        }
        let read = unread.withLookup(LookupValues([("c", "42", .string("Oslo")), ("c", "7", .int32(1))]))
        #expect(read.change.apply(to: entity) == .replaced(entity.with("City", .string("Oslo"))))
        guard case .failed(let why) = read.change.apply(to: entity.with("N", .string("8"))) else {
            Issue.record("a lookup that found nothing with if-missing: fail changed the entity")
            return
        }
        #expect(why.contains("has no entity ('c', '8')"))
        let decomposed = TableEntity(partitionKey: "p", rowKey: "r", properties: ["A": .string("Cafe\u{301}")])
        #expect(EntityChange.replaceInProperty(name: "A", find: "Caf\u{E9}", replace: "Bar").apply(to: decomposed) == .unchanged)
    }

    /// Applying a step to what it made changes nothing more (rename, set if-missing, remove,
    /// retype): a re-read after a refused write, or a resumed run, converges.
    @Test func idempotentStepsConverge() async {
        let values: [EdmValue] = [.string("12"), .string("x"), .int32(7), .int64(1 << 40), .double(2.5), .double(3), .boolean(true)]
        await propertyCheck(input: Gen.element(of: values), Gen.element(of: [EdmType.string, .int32, .int64, .double, .boolean])) {
            picked, pickedType in
            guard let value = picked, let type = pickedType else { return }
            let entity = TableEntity(partitionKey: "p", rowKey: "r", properties: ["A": value])
            for change in [
                EntityChange.renameProperty(from: "A", to: "B"), .removeProperty("A"), .setProperty(name: "C", value: .value(value), ifMissing: true),
                .retypeProperty(name: "A", to: type, onFailure: .skip),
                .mapValues(name: "A", map: ValueMap(pairs: [("12", "x"), ("7", "8"), ("x", "x"), ("true", "false")], otherwise: .fail)),
                .splitProperty(name: "A", separator: "2", into: ["B", "C"]), .joinProperties(names: ["A", "C"], separator: "|", into: "D"),
                .compute(name: "D", expression: try! ComputeExpression.parse("coalesce(C, A)"), type: nil, ifMissing: false),
            ] {
                guard case .replaced(let once) = change.apply(to: entity) else { continue }
                #expect(change.apply(to: once) == .unchanged, "\(change.name) of \(value) to \(type)")
            }
        }
    }
}

extension TableEntity {
    /// This entity with `name` set to `value` (nil removes it).
    func with(_ name: String, _ value: EdmValue?) -> TableEntity {
        var copy = self
        copy[name] = value
        return copy
    }
}
