import Foundation
import StorageProtocol

/// Incremental Copy Blob (`PUT ?comp=incrementalcopy`): copies a page blob snapshot of this
/// account (public, or named with a SAS of its own — the caller's key does not authorize the
/// source) into a page blob that becomes an incremental copy: 202 `pending`, then, in the
/// background, the destination's snapshot is made and the copy is `success`. A later copy into
/// the same destination must come from a later snapshot of the same blob. The destination is
/// read through its snapshots only (Get Blob of it is 409).
extension BlobService {
    static let incrementalCopyBlobRead = ServiceError(
        409, .operationNotAllowedOnIncrementalCopyBlob,
        "The specified operation is not allowed on an incremental copy blob: read its snapshots (x-ms-copy-destination-snapshot).")

    /// Reads of an incremental copy's destination itself (not a snapshot of it) are refused.
    static func refuseIncrementalCopyRead(_ record: BlobRecord?) throws {
        if let record, record.retired == nil, record.copy?.incremental == true { throw incrementalCopyBlobRead }
    }

    func incrementalCopy(_ container: String, _ blob: String, _ request: TransportRequest, access: CopySourceAccess) async throws
        -> TransportResponse
    {
        let (source, asked) = try await copySource(request, access: access, asynchronous: false)
        guard case .local(let record) = asked else {
            throw ServiceError(
                400, .invalidHeaderValue,
                "The value for one of the HTTP headers is not in the correct format: x-ms-copy-source (the emulator's incremental copies read page blob snapshots of this account)."
            )
        }
        guard let snapshot = record.snapshot, record.retired == .snapshot else {
            throw ServiceError(409, .incrementalCopySourceMustBeSnapshot, "The source for incremental copy request must be a snapshot.")
        }
        guard record.type == .page else { throw ServiceError(409, .invalidBlobType, "The blob type is invalid for this operation.") }
        let shownSource = TransportRequest(method: "GET", url: source).map(RequestLog.displayURL) ?? source
        let (_, existing) = try await store.blob(container, blob)
        if let existing {
            guard let copy = existing.copy, copy.incremental, Self.withoutQuery(copy.source) == Self.withoutQuery(shownSource) else {
                throw ServiceError(
                    409, .incrementalCopyBlobMismatch,
                    "The specified source blob is different than the copy source of the existing incremental copy blob.")
            }
            guard copy.status != "pending" else {
                throw ServiceError(409, .pendingCopyOperation, "There is currently a pending copy operation.")
            }
            let last = TransportRequest(method: "GET", url: copy.source)?.query.first { $0.name == "snapshot" }?.value ?? ""
            guard last.utf8.lexicographicallyPrecedes(snapshot.utf8) else {
                throw ServiceError(
                    409, .incrementalCopyOfEralierVersionSnapshotNotAllowed,
                    "The specified snapshot is earlier than the last snapshot copied into the incremental copy blob.")
            }
        }
        guard let pages = try await store.copyPages(of: record) else {
            throw ServiceError(409, .blobOverwritten, "The source blob changed while it was copied; try again.")
        }
        var info = CopyInfo(id: UUID().uuidString.lowercased(), source: shownSource, bytes: record.size, completed: store.clock.now())
        info.status = "pending"
        info.incremental = true
        info.destinationSnapshot = existing?.copy?.destinationSnapshot
        var writeConditions = try conditions(request)
        writeConditions.mayWriteIncrementalCopy = true
        let destination: BlobRecord
        do {
            destination = try await store.commitBlob(
                container: container, name: blob, dataID: "", size: record.size, blocks: [], properties: record.properties,
                metadata: record.metadata, conditions: writeConditions, copy: info, type: .page,
                sequenceNumber: record.sequenceNumber, pages: pages)
        } catch {
            await store.deleteBytes(pages.map(\.data))
            throw error
        }
        let (store, id) = (self.store, info.id)
        // The copy's second half runs after the answer (a pending copy, as on Azure).
        Task { try? await store.completeIncrementalCopy(container: container, name: blob, id: id) }
        var headers = blobHeaders(destination)
        headers["x-ms-copy-id"] = id
        headers["x-ms-copy-status"] = "pending"
        return TransportResponse(status: 202, headers: headers)
    }

    /// Finishes the incremental copies a stop left pending.
    func resumeIncrementalCopies() async {
        for pending in (try? await store.pendingIncrementalCopies()) ?? [] {
            try? await store.completeIncrementalCopy(container: pending.container, name: pending.name, id: pending.id)
        }
    }

    private static func withoutQuery(_ url: String) -> Substring { url.split(separator: "?", maxSplits: 1).first ?? "" }
}
