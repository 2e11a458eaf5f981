import Foundation
import StorageProtocol

/// List Blobs: the page of names, prefixes, snapshots, versions and deleted states a listing
/// shows, answered in XML or, when the client asks, in Arrow (docs/PROTOCOL.md §7).
extension BlobService {
    /// What orders a listing item: a blob's name or a prefix.
    static func listingKey(_ item: BlobListingXML.Item) -> String {
        switch item {
        case .blob(let r): r.name
        case .prefix(let p): p
        }
    }

    func listBlobs(_ container: String, _ request: TransportRequest, _ query: QueryParameters, tagCount: Bool = true) async throws
        -> TransportResponse
    {
        let limit = try maxResults(query)
        let prefix = query["prefix"] ?? ""
        let delimiter = query["delimiter"].flatMap { $0.isEmpty ? nil : $0 }
        let include = (query["include"] ?? "").split(separator: ",")
        let includeMetadata = include.contains("metadata")
        let includeSnapshots = include.contains("snapshots")
        let includeTags = include.contains("tags")
        var items: [BlobListingXML.Item] = []
        // `startFrom` / `endBefore` (2026-02-06): the names listed are from the one, before the other.
        let endBefore = query["endBefore"]
        var startMarker = XMLEscape.marker(query["marker"] ?? "")
        if let from = query["startFrom"], startMarker.utf8.lexicographicallyPrecedes(from.utf8) { startMarker = from }
        var marker = startMarker
        var nextMarker: String?
        scan: while true {
            let (records, next) = try await store.listBlobs(container: container, prefix: prefix, marker: marker, limit: 1000)
            for record in records {
                if let endBefore, !record.name.utf8.lexicographicallyPrecedes(endBefore.utf8) { break scan }
                if items.count == limit {
                    nextMarker = record.name
                    break scan
                }
                if let delimiter, let r = record.name.dropFirst(prefix.count).range(of: delimiter) {
                    // Every name under this virtual directory collapses into one BlobPrefix;
                    // the scan continues after the last name that can start with it.
                    let group = String(record.name[..<r.upperBound])
                    items.append(.prefix(group))
                    marker = group + "\u{10FFFF}"
                    continue scan
                }
                items.append(.blob(record))
            }
            guard let next else { break }
            marker = next
        }
        if include.contains("uncommittedblobs") {
            // Names with staged blocks and no blob yet, in this page's range, in name order.
            let staged = try await store.uncommittedBlobs(
                container: container, prefix: prefix, from: startMarker, to: nextMarker ?? endBefore)
            if !staged.isEmpty {
                items = (items + staged.map { .blob($0) }).sorted { Self.listingKey($0).utf8.lexicographicallyPrecedes(Self.listingKey($1).utf8) }
            }
        }
        let withVersions = include.contains("versions")
        let withDeleted = include.contains("deleted")
        let versionsOnly = include.contains("deletedwithversions")
        var placeholders: Set<String> = []
        if withVersions || withDeleted || versionsOnly {
            // Names with no current blob but with states this listing shows, in this page's range.
            let extra = try await store.namesWithoutCurrent(
                container: container, prefix: prefix, from: startMarker, to: nextMarker ?? endBefore, versions: withVersions || versionsOnly,
                deleted: withDeleted)
            if !extra.isEmpty {
                var shown = Set(items.map(Self.listingKey))
                for name in extra {
                    if let delimiter, let r = name.dropFirst(prefix.count).range(of: delimiter) {
                        let group = String(name[..<r.upperBound])
                        if shown.insert(group).inserted { items.append(.prefix(group)) }
                        continue
                    }
                    placeholders.insert(name)
                    items.append(
                        .blob(
                            BlobRecord(
                                row: [
                                    "container": container, "name": name, "data": "", "size": 0, "contentType": "", "created": 0, "modified": 0,
                                    "etag": "", "metadata": "[]", "blocks": "[]",
                                ])))
                }
                items.sort { Self.listingKey($0).utf8.lexicographicallyPrecedes(Self.listingKey($1).utf8) }
            }
            let names = items.compactMap { item -> String? in if case .blob(let r) = item { return r.name } else { return nil } }
            let retired = try await store.retiredStates(
                container: container, names: names, versions: withVersions || versionsOnly, deleted: withDeleted, now: store.clock.now())
            items = items.flatMap { item -> [BlobListingXML.Item] in
                guard case .blob(let r) = item else { return [item] }
                let states = retired[r.name] ?? []
                if versionsOnly && !withVersions {
                    // One entry per name: the blob, or — deleted, with versions — its newest version, marked.
                    let deletedStates = states.filter { $0.deletedAt != nil }
                    if placeholders.contains(r.name) {
                        guard var newest = states.last(where: { $0.retired == .version && $0.deletedAt == nil }) else {
                            return deletedStates.map { .blob($0) }
                        }
                        newest.versionId = nil
                        newest.retired = nil
                        newest.hasVersionsOnly = true
                        return deletedStates.map { .blob($0) } + [.blob(newest)]
                    }
                    return deletedStates.map { .blob($0) } + [item]
                }
                return states.map { .blob($0) } + (placeholders.contains(r.name) ? [] : [item])
            }
        }
        let retentionDays = withDeleted ? try await store.read { db in try EmulatorStore.deletePolicy(db)?.days } : nil
        if includeSnapshots {
            // Each blob's snapshots come just before it, oldest first, as Azure lists them.
            let names = items.compactMap { item -> String? in if case .blob(let r) = item { return r.name } else { return nil } }
            let snapshots = try await store.snapshots(container: container, names: names)
            items = items.flatMap { item -> [BlobListingXML.Item] in
                guard case .blob(let r) = item, r.retired == nil || r.retired == .base, let taken = snapshots[r.name] else { return [item] }
                return taken.map { .blob($0) } + [item]
            }
        }
        if withVersions || withDeleted || includeSnapshots {
            // One name's entries in time order (snapshots and versions by their times), the blob
            // itself (current, or soft-deleted) last — as Azure lists them.
            func order(_ r: BlobRecord) -> String {
                if let snapshot = r.snapshot { return snapshot }
                if let versionId = r.versionId, r.retired == .version { return versionId }
                return "\u{10FFFF}"
            }
            var sorted: [BlobListingXML.Item] = []
            var group: [BlobRecord] = []
            func flush() {
                sorted += group.enumerated().sorted { a, b in
                    let (x, y) = (order(a.element), order(b.element))
                    return x == y ? a.offset < b.offset : x.utf8.lexicographicallyPrecedes(y.utf8)
                }.map { .blob($0.element) }
                group = []
            }
            for item in items {
                guard case .blob(let r) = item else {
                    flush()
                    sorted.append(item)
                    continue
                }
                if let last = group.last, !last.name.utf8.elementsEqual(r.name.utf8) { flush() }
                group.append(r)
            }
            flush()
            items = sorted
        }
        if let accept = request.headers["Accept"], accept.lowercased().contains(BlobListingArrow.mediaType) {
            // Clients that read Arrow ask for it (the SDKs list XML after it as their fallback).
            let now = ServerClock.wallClock()
            let rows = items.map { item -> BlobListingArrow.Row in
                switch item {
                case .prefix(let name): .prefix(name)
                case .blob(let r):
                    .blob(
                        BlobListingEntry(
                            r, includeMetadata: includeMetadata, includeTags: includeTags, includeCopy: include.contains("copy"), tagCount: tagCount,
                            retentionDays: retentionDays, now: now))
                }
            }
            let body = BlobListingArrow.page(rows, metadata: includeMetadata, tags: includeTags, nextMarker: XMLEscape.markerToken(nextMarker))
            return TransportResponse(status: 200, headers: HeaderFields([("Content-Type", BlobListingArrow.mediaType)]), body: body)
        }
        var xml =
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"\(XMLEscape.text(serviceEndpoint(request)))\" ContainerName=\"\(XMLEscape.text(container))\">"
        xml += XMLEscape.echoIfSent("Prefix", query["prefix"]) + XMLEscape.echoIfSent("Marker", query["marker"])
        xml += XMLEscape.echoIfSent("MaxResults", query["maxresults"])
        if let delimiter { xml += XMLEscape.echo("Delimiter", delimiter) }
        xml +=
            "<Blobs>"
            + items.map {
                BlobListingXML.item(
                    $0, includeMetadata: includeMetadata, includeTags: includeTags, includeCopy: include.contains("copy"), tagCount: tagCount,
                    retentionDays: retentionDays)
            }.joined()
            + "</Blobs>"
        xml += XMLEscape.nextMarker(nextMarker) + "</EnumerationResults>"
        return TransportResponse(status: 200, headers: HeaderFields([("Content-Type", "application/xml")]), body: Data(xml.utf8))
    }
}
