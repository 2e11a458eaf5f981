import AzureStorage
import Foundation
import SeedKit

extension Seeder {
    /// The migrations of the dataset's `migrations/` folder that the target's ledger records as
    /// applied (or as counted by a baseline), in order: the desired state is the dataset as
    /// they leave it (``DesiredStorage/migrated(by:)``). Notes what is pending, running or
    /// failed. A migration the ledger counts as applied whose file cannot be read is an error:
    /// planning without it would put its changes back.
    func appliedMigrations(in folder: URL, in session: StorageSession) async throws -> [Migration] {
        // Looking at the folder and reading the files block: on the blocking threads, not the pool.
        let loaded: Result<MigrationSet?, any Error> = try await BlockingPool.run { () -> Result<MigrationSet?, any Error> in
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else { return .success(nil) }
            do { return .success(try MigrationSet.load(folder)) } catch { return .failure(error) }
        }
        // The records decide what the plan follows: a damaged one, or a read that fails, stops
        // the run (read as "none applied", it would plan every migration's undo). Only a
        // credential scoped away from the ledger (403 but a wrong key) reads as none.
        let ledger = Ledger(tables: session.run.tables)
        let records: [MigrationRecord]
        let shards: [MigrationRecord]
        do {
            records = try await ledger.migrationRecords()
            shards = try await ledger.shardRecords()
        } catch let error as AzureStorageError where error.status == 404 || (error.status == 403 && error.code != .authenticationFailed) {
            return []
        }
        // A migration under way (or in shards, or being undone) is neither applied nor not: a
        // seed now would undo what it has done so far.
        let busy = records.filter { $0.state == .running || $0.state == .undoing }.map(\.version) + Set(shards.map(\.version)).sorted()
        if !busy.isEmpty {
            throw RunError(
                "\(Self.versions(busy)) \(busy.count == 1 ? "is" : "are") being applied or undone on this target (\(Setting.migrateStatus) shows \(busy.count == 1 ? "it" : "them")): a seed now would work against \(busy.count == 1 ? "it" : "them"); finish or repair \(busy.count == 1 ? "it" : "them") first"
            )
        }
        for record in records where record.state == .failed {
            observer.note("migration \(record.version) is \(record.state.rawValue) on this target; \(Setting.migrateStatus) shows it")
        }
        let counted = records.filter { $0.state == .applied || $0.state == .baseline }
        let files: MigrationSet
        switch loaded {
        case .success(let set?): files = set
        case .success(nil):
            let applied = counted.filter { $0.state == .applied }
            guard applied.isEmpty else {
                throw RunError(
                    "the target's ledger records \(Self.versions(applied.map(\.version))) as applied, but the dataset has no \(folder.relativePathForMessages) folder: a plan without them would put their changes back; pass the dataset they came with (\(Setting.dataset))"
                )
            }
            return []
        case .failure(let error):
            guard counted.isEmpty else {
                throw RunError(
                    "the target's ledger records \(Self.versions(counted.map(\.version))) as applied, and \(folder.relativePathForMessages) cannot be read: \(spelledError(error))"
                )
            }
            return []
        }
        let status = MigrationStatus(files: files, records: records, shards: shards)
        let missing = status.entries.filter { $0.state == .missingFile }
        if !missing.isEmpty {
            throw RunError(
                "the target's ledger records \(Self.versions(missing.map(\.version))) as applied, but \(folder.relativePathForMessages) has no file for \(missing.count == 1 ? "it" : "them"): a plan without \(missing.count == 1 ? "it" : "them") would put \(missing.count == 1 ? "its" : "their") changes back; restore the file\(missing.count == 1 ? "" : "s") there, or — when \(Setting.migrateApply) read them from another folder (one named by its own flag) — keep the migrations in the dataset's migrations/ folder and pass that dataset (\(Setting.dataset))"
            )
        }
        // A file edited since it was applied: the plan would follow the edit, not what ran —
        // refused, as `migrate validate` and `migrate apply` refuse it.
        let edited = status.entries.filter { $0.state == .checksumChanged }
        if !edited.isEmpty {
            throw RunError(
                "\(Self.versions(edited.map(\.version))) in \(folder.relativePathForMessages) \(edited.count == 1 ? "was" : "were") applied to this target from a file whose bytes have changed since: a plan would follow the edited file, not what ran; restore it, or see \(Setting.migrateValidate)"
            )
        }
        let pending = status.entries.filter { $0.state == .pending || $0.state == .undone }
        if !pending.isEmpty, !migratesAfter {
            // A hint works as typed: with no flag `migrate plan` reads ./migrations when there is
            // one, else the built-in dataset's.
            let directory = folder.deletingLastPathComponent()
            let local = URL(fileURLWithPath: "migrations").standardizedFileURL.path
            let command: Phrase =
                folder.standardizedFileURL.path == local || (directory.isBuiltInDataset && !FileManager.default.fileExists(atPath: local))
                ? "\(Setting.migratePlan)" : "\(Setting.migratePlanForDataset) \(ShellWord.quoted(directory.relativePathForMessages))"
            observer.note(
                "\(pending.count) migration\(pending.count == 1 ? "" : "s") in \(folder.relativePathForMessages) not applied to this target (\(Self.versions(pending.map(\.version)))); run \(command) to see what they change"
            )
        }
        return status.entries.filter { [.applied, .baseline, .belowBaseline].contains($0.state) }.compactMap(\.migration)
    }

    static func versions(_ versions: [String]) -> String {
        versions.prefix(5).map { "V\($0)" }.joined(separator: ", ") + (versions.count > 5 ? ", …" : "")
    }
}

/// An error's message as a person reads it.
private func spelledError(_ error: any Error) -> String {
    (error as? any PersonFacingError)?.description ?? (error as? DatasetError)?.description ?? "\(error)"
}
