import Foundation
import GRDB
import StorageProtocol

/// Access tiers: Hot, Cool, Cold and Smart take effect at once; Archive makes a blob's bytes
/// unreadable until it is rehydrated, which takes time, as on Azure (docs/PROTOCOL.md §7).
extension EmulatorStore {
    static let blobArchived = ServiceError(409, .blobArchived, "This operation is not permitted on an archived blob.")

    /// How long a rehydration takes, by priority, in ticks.
    struct RehydrationTimes: Sendable {
        var standard: Int64
        var high: Int64

        init(standardSeconds: Int) {
            standard = Int64(standardSeconds) * EdmDateTime.ticksPerSecond
            high = standard == 0 ? 0 : max(standard / 10, EdmDateTime.ticksPerSecond)
        }
    }

    /// Set Blob Tier. Returns 200 when the tier took effect, 202 when a rehydration started.
    /// The ETag stays, as on Azure.
    func setBlobTier(
        container: String, name: String, tier: String, priority: String?, leaseID: String?, ifTags: TagExpression? = nil,
        times: RehydrationTimes
    ) async throws -> Int {
        let now = clock.now()
        return try await write { db in
            guard try Self.container(container, db) != nil else { throw Self.containerNotFound }
            guard let existing = try Self.blob(container, name, db) else { throw Self.blobNotFound }
            guard existing.type == .block else { throw Self.invalidBlobType }
            try BlobLease.check(try BlobLease.read(container, name, db), given: leaseID, write: true, at: now)
            try WriteConditions(ifTags: ifTags).checkTags(existing)
            func store(tier: String?, to: String?, priority: String?, at: Int64?, changed: Int64?) throws {
                try db.execute(
                    sql: """
                        UPDATE blobs SET tier = ?, rehydrateTo = ?, rehydratePriority = ?, rehydrateAt = ?, tierChanged = ?
                        WHERE container = ? AND name = ?
                        """, arguments: [tier, to, priority, at, changed, container, name])
            }
            let delay = priority == "High" ? times.high : times.standard
            if let pending = existing.rehydrateTo {
                // Only the priority of a pending rehydration may change, and only up.
                guard tier == pending, priority == "High", existing.rehydratePriority != "High" else {
                    throw ServiceError(409, .blobBeingRehydrated, "This operation is not permitted because the blob is being rehydrated.")
                }
                let at = try Int64.fetchOne(db, sql: "SELECT rehydrateAt FROM blobs WHERE container = ? AND name = ?", arguments: [container, name])
                try store(
                    tier: "Archive", to: pending, priority: "High", at: min(at ?? Int64.max, now.ticks + delay), changed: existing.tierChanged?.ticks)
                return 202
            }
            if existing.isArchived, tier != "Archive" {
                try store(tier: "Archive", to: tier, priority: priority ?? "Standard", at: now.ticks + delay, changed: existing.tierChanged?.ticks)
                return 202
            }
            try store(tier: tier, to: nil, priority: nil, at: nil, changed: tier == existing.tier ? existing.tierChanged?.ticks : now.ticks)
            return 200
        }
    }
}
