import AzureStorage
import SeedKit

/// The undo check of an entity step counted by the step's own scan, page by page, instead of
/// by a read of the whole table before the first write (``UndoCheck/countedByScan(_:)``).
///
/// A page is counted when it arrives, before any of its entities is handed on: so the count
/// is always of entities as they were before the step wrote them. The run records
/// ``progress`` before it sends a batch from a page counted since the last record; a run
/// resumed after a kill skips the entities up to the recorded key (they were counted, and may
/// have been written since) and counts the rest, which no batch of it has written.
final class ScanUndoCount {
    let step: EntityStep
    private(set) var progress: MigrationRecord.UndoCheckProgress
    /// Pages counted, and how many of them the ledger's checkpoint covers.
    private(set) var pagesCounted = 0
    private var pagesRecorded = 0
    /// The key a resumed run counted up to; nil once the scan is past it.
    private var skipping: MigrationRecord.EntityKey?

    init(step: EntityStep, resumed: MigrationRecord.UndoCheckProgress?) {
        self.step = step
        progress = resumed ?? MigrationRecord.UndoCheckProgress(scanned: nil, conflicts: 0)
        skipping = resumed?.scanned
    }

    /// Counts what undo could not tell apart in `page` (entities after the resumed key only).
    func count(_ page: [QueriedEntity]) {
        for read in page { count(read.entity, applied: step.selects(read.entity) ? step.change.apply(to: read.entity) : nil) }
        pageCounted(page)
    }

    /// Counts one entity of a page, given what the step does to it (``EntityStep/undoConflicts(_:applied:)``);
    /// ``pageCounted(_:)`` follows the page's last.
    func count(_ entity: TableEntity, applied: EntityOutcome?) {
        if let key = skipping {
            if !Self.follows(entity, key) { return }
            skipping = nil
        }
        if step.undoConflicts(entity, applied: applied) { progress.conflicts += 1 }
    }

    /// Ends the count of `page`: the key it covers is its last.
    func pageCounted(_ page: [QueriedEntity]) {
        guard let last = page.last else { return }
        if skipping == nil {
            progress.scanned = MigrationRecord.EntityKey(partitionKey: last.entity.partitionKey, rowKey: last.entity.rowKey)
        }
        pagesCounted += 1
    }

    /// Adds entities found changed when a batch was read again (a writer between the scan and
    /// the write): counted with the batch, before it is written.
    func add(_ conflicts: Int) { progress.conflicts += conflicts }

    /// Whether a page was counted since the progress was last recorded: the batch about to be
    /// sent may hold entities the recorded key does not cover.
    var needsRecording: Bool { pagesCounted > pagesRecorded }

    /// The progress, to record now with a checkpoint.
    func recorded() -> MigrationRecord.UndoCheckProgress {
        pagesRecorded = pagesCounted
        return progress
    }

    /// Whether `entity`'s keys come after `key` in the table's order: PartitionKey, then
    /// RowKey, each by its bytes.
    static func follows(_ entity: TableEntity, _ key: MigrationRecord.EntityKey) -> Bool {
        let partition = entity.partitionKey.byteOrder(key.partitionKey)
        return partition != 0 ? partition > 0 : entity.rowKey.byteOrder(key.rowKey) > 0
    }
}
