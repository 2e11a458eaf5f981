import AzureStorage
import Foundation
import SeedKit

extension Seeder {
    /// Before a dataset is planned or applied: a note when the target has a migration
    /// running or failed, or when the dataset's `migrations/` folder holds migrations the target
    /// has not had. A note only: reading the ledger or the folder failing says nothing.
    func noteMigrations(of directory: URL, in session: StorageSession) async {
        let folder = directory.appendingPathComponent("migrations")
        // Looking at the folder and reading the files block: on the blocking threads, not the pool.
        let files: MigrationSet? =
            try? await BlockingPool.run { () throws -> MigrationSet? in
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else { return nil }
                return try MigrationSet.load(folder)
            } ?? nil
        guard let records = try? await Ledger(tables: session.run.tables).migrationRecords() else { return }
        for record in records where record.state == .running || record.state == .failed {
            observer.note("migration \(record.version) is \(record.state.rawValue) on this target; \(Setting.migrateStatus) shows it")
        }
        guard let files else { return }
        let pending = MigrationStatus(files: files, records: records).entries.filter { $0.state == .pending }
        guard !pending.isEmpty else { return }
        let versions = pending.prefix(5).map(\.version).joined(separator: ", ") + (pending.count > 5 ? ", …" : "")
        observer.note(
            "\(pending.count) migration\(pending.count == 1 ? "" : "s") in \(folder.relativePathForMessages) not applied to this target (\(versions)); run \(Setting.migratePlanForDataset) \(directory.relativePathForMessages) to see what they change"
        )
    }
}
