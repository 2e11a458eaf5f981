import Foundation
import GRDB
import StorageProtocol

/// The conditions a blob write carries: `If-Match` / `If-None-Match`,
/// `If-Modified-Since` / `If-Unmodified-Since`, the `x-ms-lease-id` a leased blob needs, and
/// for page and append blobs their own (`x-ms-if-sequence-number-*`,
/// `x-ms-blob-condition-*`). Checked in the write's own transaction, so nothing changes
/// between the check and the write.
struct WriteConditions: Sendable {
    var ifMatch: String?
    var ifNoneMatch: String?
    var ifModifiedSince: Date?
    var ifUnmodifiedSince: Date?
    var leaseID: String?
    /// `x-ms-if-sequence-number-le`, `-lt`, `-eq` (page blobs).
    var sequenceNumberLE: Int64?
    var sequenceNumberLT: Int64?
    var sequenceNumberEQ: Int64?
    /// `x-ms-blob-condition-maxsize`, `x-ms-blob-condition-appendpos` (append blobs).
    var maxSize: Int?
    var appendPosition: Int?
    /// `x-ms-if-tags`: a condition on the blob's index tags.
    var ifTags: TagExpression?
    /// `x-ms-access-tier-if-modified-since` / `-if-unmodified-since` (Delete Blob): conditions
    /// on when the blob's tier last changed (its creation, if it never did).
    var tierIfModifiedSince: Date? = nil
    var tierIfUnmodifiedSince: Date? = nil
    /// The encryption the write asks for (a customer key's SHA-256, a scope): what a blob it
    /// creates is written with.
    var encryption = BlobEncryption()
    /// Whether the blob changed must have been written with the request's customer key (Append
    /// Block, Put Page, Set Blob Metadata, Snapshot Blob: the operations Azure needs the key for).
    var needsCustomerKey = false
    /// The write may change an incremental copy's destination: Incremental Copy Blob and its
    /// completion, Delete Blob. Any other write to one is Azure's 409.
    var mayWriteIncrementalCopy = false
    /// The service's own write (an incremental copy's completion): no lease stands in its way.
    var bypassesLease = false

    static let notMet = ServiceError(412, .conditionNotMet, "The condition specified using HTTP conditional header(s) is not met.")

    /// An incremental copy's destination is written only by incremental copies (and deleted).
    static let incrementalCopyBlob = ServiceError(
        409, .operationNotAllowedOnIncrementalCopyBlob,
        "The specified operation is not allowed on an incremental copy blob: it is written only by Incremental Copy Blob; read its snapshots.")

    /// Throws the service's answer when the condition fails against the current blob and its
    /// lease, read in the write's own transaction (so no lease is taken between check and write).
    func check(existing: BlobRecord?, _ db: Database, now: EdmDateTime) throws {
        // Azure checks the lease first (a leased blob written without its lease id is
        // LeaseIdMissing, whatever the other conditions), and a write carrying the active lease's
        // id is not refused by `If-None-Match: *`: the lease holder may overwrite what it holds
        // (the SDK's own upload-with-lease tests, Azure/azure-storage-net#38, Azure/Azurite#2637).
        var heldByCaller = false
        if let existing, existing.retired == nil, existing.copy?.incremental == true, !mayWriteIncrementalCopy {
            throw Self.incrementalCopyBlob
        }
        if let existing, !bypassesLease {
            let lease = try BlobLease.read(existing.container, existing.name, db)
            try BlobLease.check(lease, given: leaseID, write: true, at: now)
            heldByCaller = leaseID != nil && (lease?.isActive(at: now) ?? false)
        } else if leaseID != nil {
            throw ServiceError(412, .leaseNotPresentWithBlobOperation, "There is currently no lease on the blob.")
        }
        try checkETagAndTime(etag: existing?.etag, modified: existing?.modified, exists: existing != nil && !heldByCaller) {
            ServiceError(409, .blobAlreadyExists, "The specified blob already exists.")
        }
        try checkTags(existing)
        if needsCustomerKey, let existing {
            try BlobEncryption.checkKey(encryption.keySHA256, for: existing)
            // A blob written with a scope is changed in place only under that scope (named, or
            // its container's default when the request names none).
            let containerDefault =
                try Row.fetchOne(
                    db, sql: "SELECT defaultEncryptionScope FROM containers WHERE name = ?", arguments: [existing.container]
                )?["defaultEncryptionScope"] as String?
            let effective = encryption.scope ?? (encryption.keySHA256 == nil ? containerDefault : nil)
            guard effective == existing.encryptionScope else {
                throw ServiceError(
                    400, .invalidHeaderValue,
                    "The value for one of the HTTP headers is not in the correct format: x-ms-encryption-scope is not the blob's encryption scope.")
            }
        }
        if let existing, tierIfModifiedSince != nil || tierIfUnmodifiedSince != nil {
            let seconds = (existing.tierChanged ?? existing.created).unixSeconds
            if let since = tierIfModifiedSince, seconds <= Int64(since.timeIntervalSince1970) { throw Self.notMet }
            if let since = tierIfUnmodifiedSince, seconds > Int64(since.timeIntervalSince1970) { throw Self.notMet }
        }
    }

    /// `x-ms-if-tags` against the blob's tags; a blob that does not exist meets none.
    func checkTags(_ blob: BlobRecord?) throws {
        guard let ifTags else { return }
        guard let blob, ifTags.matches(blob.tags, container: blob.container) else { throw Self.notMet }
    }

    /// The ETag and time conditions against a resource (`etag` nil: it does not exist). ETags
    /// are compared by bytes, as Azure compares them; HTTP dates have whole seconds, so the
    /// resource's time is compared at that resolution.
    func checkETagAndTime(etag: String?, modified: EdmDateTime?, exists: Bool, alreadyExists: () -> ServiceError) throws {
        if let ifNoneMatch {
            if ifNoneMatch == "*", exists { throw alreadyExists() }
            if let etag, ifNoneMatch.isExactly(etag) { throw Self.notMet }
        }
        if let ifMatch {
            guard let etag, ifMatch == "*" || ifMatch.isExactly(etag) else { throw Self.notMet }
        }
        if let modified {
            let seconds = modified.unixSeconds
            if let since = ifModifiedSince, seconds <= Int64(since.timeIntervalSince1970) { throw Self.notMet }
            if let since = ifUnmodifiedSince, seconds > Int64(since.timeIntervalSince1970) { throw Self.notMet }
        }
    }

    /// The page blob conditions on its sequence number.
    func checkSequenceNumber(_ number: Int64) throws {
        let met =
            (sequenceNumberLE.map { number <= $0 } ?? true) && (sequenceNumberLT.map { number < $0 } ?? true)
            && (sequenceNumberEQ.map { number == $0 } ?? true)
        guard met else {
            throw ServiceError(412, .sequenceNumberConditionNotMet, "The sequence number condition specified was not met.")
        }
    }

    /// The append blob conditions, for a block of `adding` bytes appended at `size`.
    func checkAppend(size: Int, adding: Int) throws {
        if let maxSize, size + adding > maxSize {
            throw ServiceError(412, .maxBlobSizeConditionNotMet, "The max blob size condition specified was not met.")
        }
        if let appendPosition, appendPosition != size {
            throw ServiceError(412, .appendPositionConditionNotMet, "The append position condition specified was not met.")
        }
    }
}
