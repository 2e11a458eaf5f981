import AzureStorage
import Foundation
import SeedKit

/// Carries out one blob step of a migration. Every step is idempotent by construction, so a
/// run stopped anywhere resumes by listing again: a move copies server-side (through this
/// process when the account cannot read itself by URL) and deletes the source only after, and
/// skips a copy whose destination already holds the same bytes; properties are set only where
/// they differ; each delete and each change is conditional on the ETag listed.
struct BlobStepRun {
    let blobs: BlobClient
    let step: BlobStep
    let account: StorageAccount
    /// Before each blob is changed (the lock's check).
    let beforeChange: @Sendable () async throws -> Void
    /// Hears the blobs listed (the total), gone through and changed.
    var progress: MigrationProgressMeter? = nil

    /// The blobs the step changes, with what it would do to each (the plan's samples too).
    func listed() async throws -> [BlobProperties] {
        var found: [BlobProperties] = []
        do {
            for try await page in blobs.list(container: step.container, prefix: step.prefix.isEmpty ? nil : step.prefix) {
                for var blob in page where step.selects(blob.name) {
                    // The listing's XML carries the ETag unquoted; conditions take it as headers
                    // carry it (as `copy` does).
                    if let etag = blob.etag, !etag.hasPrefix("\""), !etag.hasPrefix("W/") { blob.etag = "\"" + etag + "\"" }
                    found.append(blob)
                }
            }
        } catch let error as AzureStorageError where error.status == 404 {
            throw RunError("\(step.change.name): container \(step.container) does not exist; name the right container")
        }
        return found
    }

    /// The name a move gives `name` in its destination container.
    func destination(of name: String) -> String {
        guard case .move(_, let prefix) = step.change else { return name }
        return prefix + String(decoding: name.utf8.dropFirst(step.prefix.utf8.count), as: UTF8.self)
    }

    /// Whether the step would change `blob` (a move always does; properties only when they differ).
    func changes(_ blob: BlobProperties) -> Bool {
        guard case .setProperties(let contentType, let cacheControl, let metadata) = step.change else { return true }
        return (contentType.map { $0 != blob.contentType } ?? false) || (cacheControl.map { $0 != blob.cacheControl } ?? false)
            || metadata.contains { blob.metadata[$0.key] != $0.value }
    }

    /// One line for the plan: what the step does to `blob`.
    func describe(_ blob: BlobProperties) -> String {
        let name = Printable.escaped(blob.name, quotes: false)
        switch step.change {
        case .move(let container, let prefix):
            return
                "\(step.container)/\(name) -> \(container)/\(Printable.escaped(prefix + String(decoding: blob.name.utf8.dropFirst(step.prefix.utf8.count), as: UTF8.self), quotes: false))"
        case .setProperties(let contentType, let cacheControl, let metadata):
            var parts: [String] = []
            if let contentType, contentType != blob.contentType { parts.append("content-type \(blob.contentType ?? "none") -> \(contentType)") }
            if let cacheControl, cacheControl != blob.cacheControl { parts.append("cache-control \(blob.cacheControl ?? "none") -> \(cacheControl)") }
            for (key, value) in metadata.sorted(by: { $0.key < $1.key }) where blob.metadata[key] != value {
                parts.append("metadata \(key) -> \(value)")
            }
            return "\(step.container)/\(name): " + Printable.escaped(parts.joined(separator: ", "), quotes: false)
        case .delete:
            return "- \(step.container)/\(name)"
        }
    }

    /// Changes every blob the step takes; returns how many it changed.
    func run() async throws -> Int {
        let found = try await listed()
        progress?.begin(.writing)
        progress?.total(found.count)
        var changed = 0
        var through = 0
        if case .move(let toContainer, let toPrefix) = step.change {
            // Every new name is checked before the first write (a name too long, or one a URL
            // would resolve elsewhere), so a move that cannot finish does not start.
            for blob in found {
                let name = toPrefix + String(decoding: blob.name.utf8.dropFirst(step.prefix.utf8.count), as: UTF8.self)
                if let problem = StorageNames.addressableBlobProblem(name) {
                    throw RunError(
                        "\(step.change.name): blob \(step.container)/\(Printable.escaped(blob.name, quotes: false)) would be named '\(Printable.escaped(name, quotes: false))' in \(toContainer): \(problem); nothing was moved"
                    )
                }
            }
        }
        if case .move(let toContainer, _) = step.change, !found.isEmpty {
            // The destination is made as public as the source, so moved blobs are read as before.
            let access = try await blobs.containerAccess(step.container) ?? .private
            _ = try await blobs.ensureContainer(toContainer, access: access)
        }
        // A move's destinations are looked at before its first write: one that holds another
        // blob (not a copy this move made and did not finish) is someone else's, and the step
        // is refused whole rather than replace it.
        var destinations: [String: BlobProperties?] = [:]
        if case .move(let toContainer, _) = step.change {
            var conflicts: [String] = []
            for blob in found {
                let name = destination(of: blob.name)
                let there = try await blobs.properties(container: toContainer, name: name)
                if let there {
                    // Taken for this move's own copy (a run stopped between copy and delete) only
                    // when its bytes are the source's, read and hashed: its Content-MD5 could be
                    // set to anything by whoever wrote it.
                    let same =
                        there.sameStoredBlob(as: blob)
                        ? try await StoredBytes.md5(blobs, container: toContainer, name: name)
                            == StoredBytes.md5(blobs, container: step.container, name: blob.name) : false
                    if !same { conflicts.append(name) }
                }
                destinations[blob.name] = .some(there)
            }
            if let first = conflicts.first {
                throw RunError(
                    "\(step.change.name): \(conflicts.count) destination blob\(conflicts.count == 1 ? "" : "s") in \(toContainer) already hold\(conflicts.count == 1 ? "s" : "") other bytes (first: '\(Printable.escaped(first, quotes: false))'); nothing was moved. Move or delete \(conflicts.count == 1 ? "it" : "them"), or move to another prefix; \(Setting.migratePlan) lists them"
                )
            }
        }
        let copier = BlobCopier(source: blobs, target: account)
        for blob in found {
            through += 1
            progress?.read(through)
            guard changes(blob) else { continue }
            try await beforeChange()
            guard let etag = blob.etag else { continue }
            do {
                switch step.change {
                case .move(let toContainer, _):
                    let name = destination(of: blob.name)
                    let there = destinations[blob.name] ?? nil
                    if there == nil {
                        let md5 = blob.contentMD5.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } ?? []
                        let desired = DesiredBlob(
                            name: name, content: .sourceBlob(container: step.container, name: blob.name, listed: blob), size: blob.contentLength,
                            md5: md5,
                            contentType: blob.contentType ?? "application/octet-stream")
                        do {
                            // Only where no blob is: one written there since it was looked at is
                            // someone else's, and stays.
                            try await copier.copy(
                                container: step.container, name: blob.name, listed: blob, to: blobs, as: toContainer, name, blob: desired,
                                ifAbsent: true)
                        } catch let error as AzureStorageError where error.status == 409 || error.status == 412 {
                            throw RunError(
                                "\(step.change.name): blob \(toContainer)/\(Printable.escaped(name, quotes: false)) was written by someone else while \(step.container)/\(Printable.escaped(blob.name, quotes: false)) was moved there; it was kept as they wrote it, and the source was not deleted. Decide which to keep, then run again"
                            )
                        }
                    }
                    try await blobs.deleteBlob(container: step.container, name: blob.name, etag: etag)
                case .setProperties(let contentType, let cacheControl, let metadata):
                    var options = blob.uploadOptions
                    if let contentType { options.contentType = contentType }
                    if let cacheControl { options.cacheControl = cacheControl }
                    var current = etag
                    if options.contentType != blob.uploadOptions.contentType || options.cacheControl != blob.cacheControl {
                        try await blobs.setProperties(
                            container: step.container, name: blob.name, options: options, md5: blob.contentMD5, etag: current)
                        current = try await blobs.properties(container: step.container, name: blob.name)?.etag ?? current
                    }
                    if metadata.contains(where: { blob.metadata[$0.key] != $0.value }) {
                        try await blobs.setMetadata(
                            container: step.container, name: blob.name, metadata: blob.metadata.merging(metadata) { $1 }, etag: current)
                    }
                case .delete:
                    try await blobs.deleteBlob(container: step.container, name: blob.name, etag: etag)
                }
                changed += 1
                progress?.changed(changed)
            } catch let error as AzureStorageError where error.status == 412 {
                throw RunError(
                    "\(step.change.name): blob \(step.container)/\(Printable.escaped(blob.name, quotes: false)) changed while it was migrated; run apply again (what was done is kept)"
                )
            }
        }
        return changed
    }
}

extension BlobProperties {
    /// Whether `other` holds the same stored blob: its bytes (length and a stored MD5), content
    /// headers and metadata (names compared without case, as Azure keeps them). A move that
    /// finds its copy already made — a run stopped between copy and delete — is told by this,
    /// not by the bytes alone: a blob of the same bytes with other headers is another blob.
    func sameStoredBlob(as other: BlobProperties) -> Bool {
        func lowered(_ metadata: [String: String]) -> [String: String] {
            Dictionary(metadata.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        }
        return contentLength == other.contentLength && contentMD5 != nil && contentMD5 == other.contentMD5
            && contentType == other.contentType && contentEncoding == other.contentEncoding && contentLanguage == other.contentLanguage
            && contentDisposition == other.contentDisposition && cacheControl == other.cacheControl
            && lowered(metadata) == lowered(other.metadata)
    }
}
