import AzureStorage
import Foundation
import SeedKit

/// The reads that make `migrate undo` exact, or refuse it. Before an invertible operation's
/// first write, ``conflicts(_:)`` counts what undo could not tell from what the operation
/// makes; before an undo's first write, ``beforeUndo(_:version:)`` refuses one that would
/// destroy what was written since (a table the migration created that now holds entities, a
/// blob the move back would replace).
struct UndoCheck {
    let tables: TableClient
    let blobs: BlobClient
    /// Hears the table read (phase `checking for undo`), then the total the step's own scan
    /// will read, counted on the way (phase `reading`).
    var progress: MigrationProgressMeter?

    /// Whether the operation's own scan counts what undo could not tell apart in the entities
    /// it reads (``ScanUndoCount``): an entity step that changes each entity where it is (a
    /// rekey writes under other keys, ahead of the scan). With no `where:` its scan reads every
    /// entity, and nothing is read before its first write; with one, the entities `where:`
    /// leaves out are counted first (``conflicts(_:onlyUnselected:)``).
    static func countedByScan(_ operation: MigrationOperation) -> Bool {
        guard case .entities(let step) = operation else { return false }
        if case .rekey = step.change { return false }
        return true
    }

    /// What undo could not tell apart, were `operation` applied to the target as it is now:
    /// entities it would change into something its undo would not put back as they were, or
    /// that already look like what it makes; for a move, blobs already under the destination
    /// prefix (undo would move them too).
    /// `onlyUnselected`: of an entity step, only the entities its `where:` leaves out (its
    /// scan counts the others as it reads them, once each).
    func conflicts(_ operation: MigrationOperation, onlyUnselected: Bool = false) async throws -> Int {
        var count = 0
        switch operation {
        case .entities(let step):
            do {
                var read = 0
                var selected = 0
                progress?.begin(.checkingForUndo)
                for try await page in tables.query(step.table, filter: nil) {
                    read += page.count
                    progress?.read(read)
                    for queried in page {
                        let matches = step.matchesWhere(queried.entity)
                        if !(onlyUnselected && matches), step.undoConflicts(queried.entity) { count += 1 }
                        if matches { selected += 1 }
                    }
                }
                progress?.begin(.reading, total: selected)
            } catch let error as AzureStorageError where error.status == 404 && error.operation == "Query Entities" {
                return 0  // the step itself says the table is missing
            }
        case .blobs(let step):
            guard case .move(let toContainer, let toPrefix) = step.change else { return 0 }
            do {
                for try await page in blobs.list(container: toContainer, prefix: toPrefix.isEmpty ? nil : toPrefix) {
                    // A blob there whose name maps back to one this run moves (a shard counts
                    // only its own: the others' moved blobs are theirs).
                    count +=
                        page.filter { listed in
                            guard listed.name.utf8.starts(with: toPrefix.utf8) else { return false }
                            return step.selects(step.prefix + String(decoding: listed.name.utf8.dropFirst(toPrefix.utf8.count), as: UTF8.self))
                        }.count
                }
            } catch let error as AzureStorageError where error.status == 404 {
                return 0
            }
        case .createTable, .copyTable, .deleteTable:
            return 0
        }
        return count
    }

    /// Refuses, before the undo's first write, an undo that would destroy data written since
    /// the migration: a table it would delete that holds entities, a blob the move back would
    /// replace with other bytes.
    func beforeUndo(_ undo: Migration, version: String) async throws {
        for operation in undo.operations {
            switch operation {
            case .deleteTable(let table):
                do {
                    for try await page in tables.query(table, filter: nil, top: 1) where !page.isEmpty {
                        throw RunError(
                            "migration \(version) created table \(table), which holds entities now; undo would delete them. Empty or keep the table (copy-table), then undo again; nothing was written"
                        )
                    }
                } catch let error as AzureStorageError where error.status == 404 {
                }
            case .blobs(let step):
                guard case .move(let backContainer, let backPrefix) = step.change else { continue }
                var there: [String: BlobProperties] = [:]
                do {
                    for try await page in blobs.list(container: backContainer, prefix: backPrefix.isEmpty ? nil : backPrefix) {
                        for blob in page { there[blob.name] = blob }
                    }
                } catch let error as AzureStorageError where error.status == 404 {
                }
                guard !there.isEmpty else { continue }
                var replaced: [String] = []
                do {
                    for try await page in blobs.list(container: step.container, prefix: step.prefix.isEmpty ? nil : step.prefix) {
                        for blob in page where step.selects(blob.name) {
                            let name = backPrefix + String(decoding: blob.name.utf8.dropFirst(step.prefix.utf8.count), as: UTF8.self)
                            guard let old = there[name] else { continue }
                            // The same blob there: a move back that stopped after its copy.
                            let same = old.sameStoredBlob(as: blob)
                            if !same { replaced.append(name) }
                        }
                    }
                } catch let error as AzureStorageError where error.status == 404 {
                }
                if let first = replaced.first {
                    throw RunError(
                        "undo of migration \(version) would move \(step.container)/\(Printable.escaped(step.prefix, quotes: false))… back over \(replaced.count) blob(s) written since in \(backContainer) (e.g. \(Printable.escaped(first, quotes: false))); move or delete them, then undo again; nothing was written"
                    )
                }
            default: continue
            }
        }
    }
}
