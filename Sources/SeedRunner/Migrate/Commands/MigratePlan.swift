import AzureStorage
import Foundation
import SeedKit

/// `migrate plan` (Flyway's info with a dry run): what the pending migrations would change.
public struct MigratePlan: Sendable {
    public let migrator: Migrator

    public init(_ migrator: Migrator) { self.migrator = migrator }

    /// The dry run: what each pending (or interrupted) migration up to `to` would change, with
    /// a few changes field by field; writes nothing. Operations are simulated in order, so an
    /// operation sees what the ones before it (in its migration and earlier ones) would make.
    public func run(to: MigrationVersion? = nil) async throws -> (MigrationStatus, [MigrationReport]) {
        let files = try await migrator.load()
        return try await migrator.session { session in
            let status = try await Ledger(tables: session.run.tables).status(of: files)
            try Migrator.checkAcknowledged(Migrator.chosen(status, to: to))
            var simulation = try await MigrationSimulation(tables: session.run.tables, blobs: session.run.blobs, observer: migrator.observer)
            simulation.shard = migrator.target.shard
            var reports: [MigrationReport] = []
            for entry in Migrator.chosen(status, to: to) {
                guard let part = try Migrator.shardPart(entry, shard: migrator.target.shard) else { continue }
                reports.append(try await simulation.plan(part))
            }
            return (status, reports)
        }
    }
}
