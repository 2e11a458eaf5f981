import Foundation
import GRDB
import StorageProtocol

/// A Lease Blob request (`x-ms-lease-action`), its headers parsed.
enum LeaseAction: Sendable {
    /// `duration` nil is infinite (-1).
    case acquire(duration: Int?, proposed: String?)
    case renew(id: String)
    case change(id: String, proposed: String)
    case release(id: String)
    /// `period` nil breaks a fixed lease when it would expire, an infinite one at once.
    case breakLease(period: Int?)
}

/// What a lease action answers: the lease id (acquire, renew, change), the seconds until a
/// break ends (break), and the leased blob's or container's ETag and Last-Modified.
struct LeaseOutcome: Sendable {
    var id: String?
    var breakSeconds: Int?
    var etag: String
    var modified: EdmDateTime
}

extension EmulatorStore {
    /// Carries out a lease action on a blob, or with `name` nil on the container itself, in one
    /// transaction, as Azure's lease states answer it (docs/PROTOCOL.md, "Leases").
    func lease(container: String, name blobName: String?, _ action: LeaseAction, conditions: WriteConditions = WriteConditions()) async throws
        -> LeaseOutcome
    {
        let now = clock.now()
        let noun = blobName == nil ? "container" : "blob"
        let name = blobName ?? BlobLease.containerKey
        return try await write { db in
            guard let containerRecord = try Self.container(container, db) else { throw Self.containerNotFound }
            let blob: (etag: String, modified: EdmDateTime)
            if let blobName {
                guard let record = try Self.blob(container, blobName, db) else { throw Self.blobNotFound }
                blob = (record.etag, record.modified)
                try conditions.checkTags(record)
            } else {
                blob = (containerRecord.etag, containerRecord.modified)
            }
            // The request's conditions, against what is leased, in this transaction.
            try conditions.checkETagAndTime(etag: blob.etag, modified: blob.modified, exists: true) { WriteConditions.notMet }
            let lease = try BlobLease.read(container, name, db)
            let state = lease?.state(at: now) ?? .available
            let notPresent = ServiceError(409, .leaseNotPresentWithLeaseOperation, "There is currently no lease on the \(noun).")
            let mismatch = ServiceError(409, .leaseIdMismatchWithLeaseOperation, "The lease ID specified did not match the lease ID for the \(noun).")
            func expiry(_ duration: Int?) -> EdmDateTime? { duration.map { EdmDateTime(ticks: now.ticks + Int64($0) * 10_000_000) } }
            switch action {
            case .acquire(let duration, let proposed):
                switch state {
                case .available, .expired, .broken:
                    let id = proposed ?? UUID().uuidString.lowercased()
                    try BlobLease(id: id, duration: duration, expires: expiry(duration)).write(container, name, db)
                    return LeaseOutcome(id: id, etag: blob.etag, modified: blob.modified)
                case .leased:
                    guard let proposed, BlobLease.same(proposed, lease!.id) else {
                        throw ServiceError(409, .leaseAlreadyPresent, "There is already a lease present.")
                    }
                    try BlobLease(id: lease!.id, duration: duration, expires: expiry(duration)).write(container, name, db)
                    return LeaseOutcome(id: proposed, etag: blob.etag, modified: blob.modified)
                case .breaking:
                    if let proposed, BlobLease.same(proposed, lease!.id) {
                        throw ServiceError(
                            409, .leaseIsBreakingAndCannotBeAcquired, "There is already a breaking lease present and it cannot be acquired.")
                    }
                    throw ServiceError(409, .leaseAlreadyPresent, "There is already a lease present.")
                }
            case .renew(let id):
                guard let lease, state != .available else { throw notPresent }
                guard BlobLease.same(id, lease.id) else { throw mismatch }
                if state == .breaking || state == .broken {
                    throw ServiceError(
                        409, .leaseIsBrokenAndCannotBeRenewed, "The lease ID matched, but the lease has been broken explicitly and cannot be renewed."
                    )
                }
                try BlobLease(id: lease.id, duration: lease.duration, expires: expiry(lease.duration)).write(container, name, db)
                return LeaseOutcome(id: id, etag: blob.etag, modified: blob.modified)
            case .change(let id, let proposed):
                guard let lease, state != .available else { throw notPresent }
                guard BlobLease.same(id, lease.id) || BlobLease.same(proposed, lease.id) else { throw mismatch }
                switch state {
                case .leased:
                    var changed = lease
                    changed.id = proposed
                    try changed.write(container, name, db)
                    return LeaseOutcome(id: proposed, etag: blob.etag, modified: blob.modified)
                case .breaking:
                    throw ServiceError(
                        409, .leaseIsBreakingAndCannotBeChanged,
                        "The lease ID matched, but the lease is currently in breaking state and cannot be changed.")
                default:
                    throw notPresent
                }
            case .release(let id):
                guard let lease, state != .available else { throw notPresent }
                guard BlobLease.same(id, lease.id) else { throw mismatch }
                try BlobLease.delete(container, name, db)
                return LeaseOutcome(etag: blob.etag, modified: blob.modified)
            case .breakLease(let period):
                guard var lease, state != .available else { throw notPresent }
                let end: EdmDateTime?
                switch state {
                case .leased:
                    let requested = period.map { EdmDateTime(ticks: now.ticks + Int64($0) * 10_000_000) }
                    switch (lease.expires, requested) {
                    case (nil, nil): end = nil
                    case (nil, let requested?): end = requested
                    case (let expires?, nil): end = expires
                    case (let expires?, let requested?): end = min(expires, requested)
                    }
                case .breaking:
                    let requested = period.map { EdmDateTime(ticks: now.ticks + Int64($0) * 10_000_000) }
                    end = requested.map { min($0, lease.breakAt!) } ?? lease.breakAt
                default:
                    end = nil
                }
                if let end, end > now {
                    lease.breakAt = end
                    lease.broken = false
                } else {
                    lease.breakAt = nil
                    lease.broken = true
                }
                lease.expires = nil
                try lease.write(container, name, db)
                let seconds = lease.breakAt.map { Int((($0.ticks - now.ticks) + 9_999_999) / 10_000_000) } ?? 0
                return LeaseOutcome(breakSeconds: seconds, etag: blob.etag, modified: blob.modified)
            }
        }
    }

    /// Checks a request's `x-ms-lease-id` against a blob's lease, outside a write (Put Block,
    /// reads): a missing blob has no lease.
    func checkLease(container: String, name: String?, given: String?, write: Bool) async throws {
        guard given != nil || write else { return }
        let now = clock.now()
        try await read { db in
            try BlobLease.check(
                try BlobLease.read(container, name ?? BlobLease.containerKey, db), given: given, write: write, at: now, container: name == nil)
        }
    }

    /// The lease of one blob, for the headers of Get Blob and Get Blob Properties.
    func lease(container: String, name: String?) async throws -> (BlobLease?, EdmDateTime) {
        let now = clock.now()
        return (try await read { db in try BlobLease.read(container, name ?? BlobLease.containerKey, db) }, now)
    }
}
