import Foundation
import GRDB
import StorageProtocol

/// Incremental Copy Blob's second half: the copy stays `pending` until the destination's
/// snapshot is made; then it is `success` and names that snapshot. What a `kill -9` leaves
/// pending is finished at the next start.
extension EmulatorStore {
    /// Marks the copy `id` of `container/name` done and snapshots the destination, in one
    /// transaction; nothing when the blob was replaced or the copy is no longer pending.
    func completeIncrementalCopy(container: String, name: String, id: String) async throws {
        var conditions = WriteConditions()
        conditions.mayWriteIncrementalCopy = true
        conditions.bypassesLease = true
        _ = try await withClonedState(container: container, name: name, conditions: conditions) { db, base, extents, clones, now in
            guard var copy = base.copy, copy.id == id, copy.status == "pending" else { return false }
            let snapshot = now.iso8601
            copy.status = "success"
            copy.completed = now
            copy.destinationSnapshot = snapshot
            try db.execute(sql: "UPDATE blobs SET copy = ? WHERE container = ? AND name = ?", arguments: [copy.encoded, container, name])
            try Self.insertClone(base, extents, clones[0], as: .snapshot, key: snapshot, metadata: nil, db)
            return true
        }
    }

    /// The incremental copies left pending (by a stop before they finished).
    func pendingIncrementalCopies() async throws -> [(container: String, name: String, id: String)] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT container, name, copy FROM blobs WHERE copy IS NOT NULL AND copy LIKE '%pending%'").compactMap { row in
                guard let copy = (row["copy"] as String?).flatMap(CopyInfo.init(encoded:)), copy.incremental, copy.status == "pending" else {
                    return nil
                }
                return (row["container"], row["name"], copy.id)
            }
        }
    }
}
