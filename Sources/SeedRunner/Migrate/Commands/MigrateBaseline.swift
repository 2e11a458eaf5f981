import AzureStorage
import Foundation
import SeedKit

/// `migrate baseline` (Flyway's baseline): an account with no migration history counted as
/// migrated up to a version.
public struct MigrateBaseline: Sendable {
    public let migrator: Migrator

    public init(_ migrator: Migrator) { self.migrator = migrator }

    /// Counts the target as migrated up to `version`: one `baseline` record; files at or
    /// below it are never run. Refused when the ledger already holds migrations.
    public func run(_ version: MigrationVersion, description: String = "baseline") async throws -> MigrationRecord {
        _ = try await migrator.load()
        let tool = migrator.tool
        let clock = migrator.clock
        return try await migrator.locked { session, _ in
            let ledger = Ledger(tables: session.run.tables)
            let records = try await ledger.migrationRecords()
            if let first = records.first {
                throw RunError(
                    "the target's ledger already holds migration \(first.version) (\(first.state.rawValue)); baseline marks an account that has no migration history"
                )
            }
            var record = MigrationRecord(
                version: version.canonical, description: description, script: "", checksum: "", state: .baseline, startedAt: clock(), tool: tool,
                host: Migrator.host)
            record.endedAt = record.startedAt
            try await ledger.write(record)
            return record
        }
    }
}
