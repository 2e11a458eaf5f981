import AzseedTestSupport
import AzureStorage
import Foundation
import Testing

@testable import SeedKit

/// `migrate lint`'s findings in a file alone: destructive operations not acknowledged in their
/// own mapping are errors at their line; operations with no exact undo are warnings.
@Suite struct MigrationLintTests {
    static func migration(_ operations: String) throws -> Migration {
        try MigrationSet.load(try MigrationFileTests.folder(["V1__m.yaml": "description: m\noperations:\n" + operations])).migrations[0]
    }

    @Test func eachDestructiveOperationIsAnErrorAtItsLineUntilItsMappingAcknowledgesIt() throws {
        let destructive = [
            "remove-property: {table: tbl, name: A}", "delete-entities: {table: tbl, where: \"A eq 1\"}", "delete-table: {table: tbl}",
            "delete-blobs: {container: ctr, prefix: x}", "retype-property: {table: tbl, name: A, to: Int32, on-failure: remove}",
            "rekey: {table: tbl, row: \"{{A}}\"}",
        ]
        for operation in destructive {
            let plain = try Self.migration("  - rename-property: {table: tbl, from: X, to: Y}\n  - \(operation)\n")
            let errors = plain.lintFindings().filter { $0.severity == .error }
            #expect(errors.map(\.line) == [4] && errors[0].message.description.contains("allow-destructive: true"), "\(operation)")
            #expect(plain.firstUnacknowledgedDestructive?.line == 4)
            let acknowledged = try Self.migration("  - \(operation.dropLast()), allow-destructive: true}\n")
            #expect(acknowledged.lintFindings().allSatisfy { $0.severity == .warning }, "\(operation)")
            #expect(acknowledged.firstUnacknowledgedDestructive == nil)
            // Applied already: said as history, never an error.
            #expect(plain.lintFindings(applied: true).allSatisfy { $0.severity == .warning })
        }
    }

    @Test func whatDestroysNothingIsNotAnErrorAndCannotBeAcknowledged() throws {
        for operation in [
            "rename-property: {table: tbl, from: X, to: Y}", "retype-property: {table: tbl, name: A, to: Int32, on-failure: skip}",
            "set-property: {table: tbl, name: A, value: 1}", "move-blobs: {container: ctr, prefix: a/, to-container: dst, to-prefix: b/}",
            "copy-table: {from: tbl, to: other}", "create-table: {table: tbl}",
        ] {
            #expect(try Self.migration("  - \(operation)\n").lintFindings().allSatisfy { $0.severity == .warning }, "\(operation)")
            #expect(throws: DatasetError.self, "\(operation)") { try Self.migration("  - \(operation.dropLast()), allow-destructive: true}\n") }
        }
        // allow-destructive: false says nothing either way.
        #expect(try Self.migration("  - remove-property: {table: tbl, name: A, allow-destructive: false}\n").firstUnacknowledgedDestructive != nil)
    }

    @Test func anOperationWithNoExactUndoIsAWarning() throws {
        let findings = try Self.migration("  - rename-property: {table: tbl, from: X, to: Y}\n  - set-property: {table: tbl, name: A, value: 1}\n")
            .lintFindings()
        #expect(findings.map(\.severity) == [.warning] && findings.map(\.line) == [4] && findings[0].operation == "set-property")
    }
}
