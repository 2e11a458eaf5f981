import AzureStorage
import Crypto

/// Compares a desired state with an observed one and lists the actions between them. Pure
/// but for reading: the same inputs always give the same plan.
public enum Planner {
    /// The plan that takes the target to `desired`. `observed` holds its containers and
    /// which tables exist; its entities are read from `entities` page by page and merged
    /// with the desired ones (``EntityMerge``), so memory does not grow with the table —
    /// without `entities`, from `observed`'s own. `header` names the inputs; with `digests`
    /// its digests are filled in here (only saved and JSON plans carry them, and hashing
    /// every entity twice was a fifth of a large plan's time). Deletes are planned only
    /// when `header.prune` is set. Throws ``ObservedOrderError`` when `entities` does not
    /// list them in byte order.
    public static func plan(
        desired: DesiredStorage, observed: ObservedState, entities: (any ObservedEntitySource)? = nil,
        header: PlanHeader, digests: Bool = true, retention: PlanRetention = .whole
    ) async throws -> Plan {
        let digest = digests ? LineDigest() : nil
        var plan = Plan(
            header: header, containers: [], blobs: [], tables: [], entities: [], entityDeletes: [],
            unchangedEntities: [:], extraEntities: [:], extraBlobs: [:])
        planContainers(desired, observed, &plan, digest)
        for table in desired.tables {
            digest?.add(Array("table\u{0}\(table.name)\n".utf8))
            plan.tables.append(TableAction(name: table.name, change: observed.tables[table.name] == nil ? .create : .unchanged))
        }
        var merge = EntityMerge(
            desired: desired, source: entities ?? observed, existingTables: Set(observed.tables.keys),
            prune: header.prune, digests: digests)
        var collector = PlanEntityCollector(retention: retention)
        try await merge.run(digest: digest) { collector.take($0) }
        plan.entities = collector.entities
        plan.entityDeletes = collector.deletes
        plan.countedEntities = collector.counted
        plan.fingerprints = collector.fingerprints
        plan.unchangedEntities = merge.unchanged
        plan.extraEntities = merge.extra.filter { $0.value > 0 }
        plan.entitiesChecked = true  // every desired entity went through DesiredStream's check
        if let digest {
            plan.header.desiredDigest = hex(await digest.finalize())
            // Every shard creates the containers and tables (and sets access levels): a shard's
            // saved plan records them as its own actions leave them, so another shard that ran
            // first does not make it look changed.
            let seen = header.shard == nil ? observed : observed.afterContainerAndTableActions(of: desired)
            plan.header.observedDigest = observedDigest(seen, partitions: merge.partitionDigests)
        }
        return plan
    }

    /// Plans `desired`'s entities again against `entities` and hands each action to `emit`
    /// as it is made, holding none: how a plan counted rather than held
    /// (``Plan/countedEntities``) is carried out. Every table of `desired` must exist.
    /// Returns the entities it found unchanged, by table.
    package static func remakeEntities(
        desired: DesiredStorage, entities: any ObservedEntitySource, prune: Bool, emit: (MergeOutput) async throws -> Void
    ) async throws -> [String: Int] {
        var merge = EntityMerge(
            desired: desired, source: entities, existingTables: Set(desired.tables.map(\.name)), prune: prune, digests: false)
        try await merge.run(digest: nil, emit: emit)
        return merge.unchanged
    }

    private static func planContainers(_ desired: DesiredStorage, _ observed: ObservedState, _ plan: inout Plan, _ digest: LineDigest?) {
        for container in desired.containers {
            digest?.add(Array("container\u{0}\(container.name)\u{0}\(container.access.rawValue)\n".utf8))
            let existing = observed.containers[container.name]
            // Metadata is compared when the desired state says it (a snapshot, a copy): names
            // without case, as Azure keeps them; values by bytes.
            let metadataDiffers = container.metadata.map { wanted in !Self.sameMetadata(wanted, existing?.metadata ?? [:]) } ?? false
            switch existing {
            case nil:
                plan.containers.append(
                    ContainerAction(
                        name: container.name, change: .create, access: container.access,
                        metadata: container.metadata.flatMap { $0.isEmpty ? nil : $0 }))
            case let current? where current.access != container.access || metadataDiffers:
                plan.containers.append(
                    ContainerAction(
                        name: container.name, change: .update, access: container.access,
                        currentAccess: current.access != container.access ? current.access : nil,
                        metadata: metadataDiffers ? container.metadata : nil))
            default:
                plan.containers.append(ContainerAction(name: container.name, change: .unchanged, access: container.access))
            }
            let blobs = existing?.blobs ?? [:]
            for blob in container.blobs {
                digest?.add(Array("blob\u{0}\(container.name)\u{0}\(blob.name)\u{0}\(blob.md5Base64)\u{0}\(blob.contentType)\n".utf8))
                var action = BlobAction(container: container.name, name: blob.name, change: .create, blob: blob, reasons: [])
                if let current = blobs[ExactString(blob.name)] {
                    action.currentMD5 = current.md5
                    action.currentETag = current.etag
                    action.currentContentType = current.contentType
                    if current.md5 != blob.md5Base64 { action.reasons.append("md5") }
                    if current.contentType != blob.contentType { action.reasons.append("contentType") }
                    if let source = blob.stored, let target = current.listed {
                        // A copy, or a snapshot that recorded them, also carries content headers and metadata.
                        if !Self.sameContentHeaders(source, target) { action.reasons.append("headers") }
                        if !Self.sameMetadata(source.metadata, target.metadata) { action.reasons.append("metadata") }
                        // Compared where both sides report one (premium accounts have no tiers).
                        if let wanted = source.accessTier, let held = target.accessTier, wanted.lowercased() != held.lowercased() {
                            action.reasons.append("tier")
                            action.currentAccessTier = held
                        }
                    }
                    action.change = action.reasons.isEmpty ? .unchanged : .update
                }
                plan.blobs.append(action)
            }
            let wanted = Set(container.blobs.map { ExactString($0.name) })
            let extra = blobs.keys.filter { !wanted.contains($0) }.sorted()
            if plan.header.prune {
                for name in extra {
                    let current = blobs[name]!
                    plan.blobs.append(
                        BlobAction(
                            container: container.name, name: name.string, change: .delete, blob: nil, reasons: [],
                            currentMD5: current.md5, currentContentType: current.contentType, currentETag: current.etag))
                }
            } else if !extra.isEmpty {
                plan.extraBlobs[container.name] = extra.count
            }
        }
    }

    /// Cache-Control, Content-Encoding, -Language and -Disposition, compared by their bytes.
    static func sameContentHeaders(_ a: BlobProperties, _ b: BlobProperties) -> Bool {
        func same(_ x: String?, _ y: String?) -> Bool { (x ?? "").isExactly(y ?? "") }
        return same(a.cacheControl, b.cacheControl) && same(a.contentEncoding, b.contentEncoding)
            && same(a.contentLanguage, b.contentLanguage) && same(a.contentDisposition, b.contentDisposition)
    }

    /// Metadata compared by bytes: names as Azure keeps them (case-insensitive, so lowercased
    /// for the comparison), values exactly.
    static func sameMetadata(_ a: [String: String], _ b: [String: String]) -> Bool {
        func canonical(_ m: [String: String]) -> [[UInt8]] {
            m.map { Array($0.key.lowercased().utf8) + [0] + Array($0.value.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        }
        return canonical(a) == canonical(b)
    }

    /// SHA-256 of everything observed, in a canonical order: what `apply --plan` compares
    /// to refuse a plan whose target changed since it was made. Entities count through
    /// their partitions' digests, which the merge takes as it reads them.
    public static func observedDigest(_ observed: ObservedState) -> String {
        var partitions: [TablePartition: SHA256.Digest] = [:]
        var line: [UInt8] = []
        for (name, table) in observed.tables {
            for (partition, rows) in table.partitions where !rows.isEmpty {
                var digest = SHA256()
                for rowKey in rows.keys.sorted() {
                    line.removeAll(keepingCapacity: true)
                    EntityJSONEncoder.append(rows[rowKey]!, to: &line)
                    line.append(UInt8(ascii: "\n"))
                    digest.update(data: line)
                }
                partitions[TablePartition(table: name, partition: partition)] = digest.finalize()
            }
        }
        return observedDigest(observed, partitions: partitions)
    }

    /// The containers and blobs of `observed`, then each table with its partitions' digests.
    static func observedDigest(_ observed: ObservedState, partitions: [TablePartition: SHA256.Digest]) -> String {
        var digest = SHA256()
        for name in observed.containers.keys.sorted() {
            let container = observed.containers[name]!
            digest.update(data: Array("container\u{0}\(name)\u{0}\(container.access.rawValue)\n".utf8))
            for blobName in container.blobs.keys.sorted() {
                let blob = container.blobs[blobName]!
                digest.update(
                    data: Array("blob\u{0}\(name)\u{0}\(blobName)\u{0}\(blob.md5 ?? "")\u{0}\(blob.contentType ?? "")\u{0}\(blob.size)\n".utf8))
            }
        }
        let byTable = Dictionary(grouping: partitions, by: \.key.table)
        for name in observed.tables.keys.sorted() {
            digest.update(data: Array("table\u{0}\(name)\n".utf8))
            for (key, value) in (byTable[name] ?? []).sorted(by: { $0.key.partition < $1.key.partition }) {
                digest.update(data: Array("partition\u{0}\(key.partition.string)\u{0}\(hex(value))\n".utf8))
            }
        }
        return hex(digest.finalize())
    }

    static func hex(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Planner {
    /// What `reset` does: delete the dataset's blobs that exist and every entity of the
    /// dataset's partitions. Containers and tables stay.
    public static func resetPlan(desired: DesiredStorage, observed: ObservedState, header: PlanHeader) -> Plan {
        var plan = Plan(
            header: header, containers: [], blobs: [], tables: [], entities: [], entityDeletes: [],
            unchangedEntities: [:], extraEntities: [:], extraBlobs: [:])
        plan.header.prune = true
        for container in desired.containers {
            guard let existing = observed.containers[container.name] else { continue }
            for blob in container.blobs {
                guard let current = existing.blobs[ExactString(blob.name)] else { continue }
                plan.blobs.append(
                    BlobAction(
                        container: container.name, name: blob.name, change: .delete, blob: nil, reasons: [],
                        currentMD5: current.md5, currentContentType: current.contentType, currentETag: current.etag))
            }
        }
        for table in desired.tables {
            guard let existing = observed.tables[table.name] else { continue }
            for partition in table.partitions {
                let rows = existing.partitions[ExactString(partition)] ?? [:]
                for rowKey in rows.keys.sorted() {
                    var action = EntityAction(table: table.name, kind: nil, partitionKey: partition, rowKey: rowKey.string, change: .delete)
                    action.etag = rows[rowKey]?.etag
                    plan.entityDeletes.append(action)
                }
            }
        }
        plan.header.observedDigest = observedDigest(observed)
        return plan
    }
}

extension ObservedState {
    /// This state with the desired containers existing at their desired access level and the
    /// desired tables existing: what every shard's container and table actions leave.
    func afterContainerAndTableActions(of desired: DesiredStorage) -> ObservedState {
        var copy = self
        for container in desired.containers {
            var found = copy.containers[container.name] ?? ObservedContainer(access: container.access)
            found.access = container.access
            copy.containers[container.name] = found
        }
        for table in desired.tables where copy.tables[table.name] == nil { copy.tables[table.name] = ObservedTable() }
        return copy
    }
}
