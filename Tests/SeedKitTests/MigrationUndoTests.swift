import AzseedTestSupport
import AzureStorage
import Foundation
import Testing

@testable import SeedKit

/// The undo of each invertible step, over every entity a small alphabet makes: it puts back
/// only what the step could have made (sound), and puts back exactly what the step changed
/// when the apply-time check finds nothing to tell apart (exact).
@Suite struct MigrationUndoTests {
    static let file = """
        description: every invertible step
        operations:
          - rename-property: {table: tbl, from: A, to: B}
          - rename-property: {table: tbl, where: "A ne 'a'", from: A, to: B}
          - set-property: {table: tbl, name: C, value: 1, if-missing: true}
          - set-property: {table: tbl, name: C, template: "{{A}}x", type: String, if-missing: true}
          - replace-in-property: {table: tbl, name: A, find: a, replace: b}
          - replace-in-property: {table: tbl, name: A, find: ab, replace: b}
          - replace-in-property: {table: tbl, where: "B eq 'b'", name: A, find: ab, replace: a}
          - map-values: {table: tbl, name: A, map: {a: b, ab: ba}}
          - map-values: {table: tbl, where: "B ne 'a'", name: A, map: {"": x, b: aab}, otherwise: fail}
          - split-property: {table: tbl, name: A, separator: a, into: [B, C]}
          - join-properties: {table: tbl, names: [A, B], separator: a, into: C}
          - compute: {table: tbl, name: C, expression: "if(has(B), A + B, A + 'x')", if-missing: true}
          - create-table: {table: tbl2}
          - move-blobs: {container: ctr, prefix: "x/", to-container: dst, to-prefix: "y/"}

        """

    /// Every entity with A and B each absent or one of a few texts, and C absent or a number or text.
    static let entities: [TableEntity] = {
        let texts: [EdmValue?] = [nil, .string(""), .string("a"), .string("b"), .string("ab"), .string("ba"), .string("aab"), .string("bab")]
        let cs: [EdmValue?] = [nil, .int32(1), .string("ax"), .string("x")]
        var out: [TableEntity] = []
        for a in texts {
            for b in texts {
                for c in cs {
                    var entity = TableEntity(partitionKey: "p", rowKey: "r")
                    entity["A"] = a
                    entity["B"] = b
                    entity["C"] = c
                    out.append(entity)
                }
            }
        }
        return out
    }()

    static func migration() throws -> Migration {
        let folder = try Scratch.folder("undo")
        try Data(file.utf8).write(to: folder.appendingPathComponent("V1__all.yaml"))
        return try MigrationSet.load(folder).migrations[0]
    }

    @Test func theUndoOfEachStepIsSoundAndExactWhereTheCheckFindsNothing() throws {
        let migration = try Self.migration()
        #expect(migration.firstNotInvertible == nil)
        for case .entities(let step) in migration.operations {
            let inverse = try #require(step.inverse)
            var conflicts = 0
            var exact = 0
            for entity in Self.entities {
                // Sound: what the undo puts back is an entity the step selects and makes this one of.
                if case .replaced(let before) = inverse.change.apply(to: entity) {
                    #expect(step.selects(before) && step.change.apply(to: before) == .replaced(entity), "\(step.change.name): \(entity)")
                }
                // Given the step's outcome (as a scan that applies it anyway asks), the same answer.
                let applied = step.selects(entity) ? step.change.apply(to: entity) : nil
                #expect(step.undoConflicts(entity, applied: applied) == step.undoConflicts(entity), "\(step.change.name): \(entity)")
                if step.undoConflicts(entity) {
                    conflicts += 1
                    continue
                }
                // Exact: an entity the check passes comes back as it was, or is left alone.
                switch step.selects(entity) ? step.change.apply(to: entity) : .unchanged {
                case .replaced(let after):
                    exact += 1
                    #expect(inverse.change.apply(to: after) == .replaced(entity), "\(step.change.name): \(entity)")
                case .unchanged, .failed:
                    #expect(inverse.change.apply(to: entity) == .unchanged, "\(step.change.name): \(entity)")
                default: Issue.record("\(step.change.name) deleted or rekeyed")
                }
            }
            // Neither half is empty: the alphabet reaches both cases for every step.
            #expect(conflicts > 0 && exact > 0, "\(step.change.name): \(conflicts) conflicts, \(exact) exact")
        }
    }

    @Test func theUndoMigrationRunsTheInversesLastFirst() throws {
        let migration = try Self.migration()
        let undo = migration.undo(appliedCounts: [3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 2])
        // create-table of a table that was there (count 0) has nothing to put back.
        #expect(undo.operations.map(\.name).first == "move-blobs" && !undo.operations.contains { $0.name == "delete-table" })
        #expect(undo.operations.count == 13 && undo.operations.dropFirst().allSatisfy { $0.name.hasPrefix("undo ") })
        guard case .blobs(let back) = undo.operations[0], case .move(let to, let prefix) = back.change else {
            Issue.record("not a move back")
            return
        }
        #expect(back.container == "dst" && back.prefix == "y/" && to == "ctr" && prefix == "x/")
        #expect(migration.undo(appliedCounts: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]).operations.contains { $0.name == "delete-table" })
    }

    @Test func operationsThatLoseWhatTheyReplaceAreNotInvertible() throws {
        for (op, invertible) in [
            ("set-property: {table: tbl, name: C, value: 1}", false), ("remove-property: {table: tbl, name: A}", false),
            ("retype-property: {table: tbl, name: A, to: Int32}", false), ("delete-entities: {table: tbl, where: \"A eq 'a'\"}", false),
            ("rekey: {table: tbl, row: \"{{A}}\"}", false), ("copy-table: {from: tbl, to: other}", false), ("delete-table: {table: tbl}", false),
            ("delete-blobs: {container: ctr, prefix: x}", false), ("set-blob-properties: {container: ctr, prefix: x, cache-control: no}", false),
            ("set-property: {table: tbl, name: C, value: 1, if-missing: true}", true),
        ] {
            let folder = try Scratch.folder("undo")
            try Data("description: one\noperations:\n  - \(op)\n".utf8).write(to: folder.appendingPathComponent("V1__one.yaml"))
            let migration = try MigrationSet.load(folder).migrations[0]
            #expect((migration.firstNotInvertible == nil) == invertible, "\(op)")
        }
    }
}
