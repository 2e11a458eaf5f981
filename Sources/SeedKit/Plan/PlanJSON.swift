import AzureStorage
import Foundation

/// The plan as JSON (docs/FORMATS.md, plans): what `--output json` prints and `--out FILE` saves.
/// Never holds a secret: the target is its account name and endpoints.
extension Plan {
    public static let formatVersion: Int64 = 1

    /// The whole plan as one JSON value (tests and small plans; ``writeJSON(_:)`` streams).
    package func json() -> JSONValue {
        var actions: [JSONValue] = []
        forEachAction { actions.append($0) }
        return .object(headerMembers() + [("actions", .array(actions))])
    }

    /// Writes the plan as two-space indented JSON — the bytes of `json().pretty()` — a
    /// chunk at a time, each action encoded as its turn comes: the document is never held
    /// whole, however many actions it lists.
    public func writeJSON(_ write: ([UInt8]) throws -> Void) rethrows {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (key, value) in headerMembers() {
            out.append(contentsOf: "\n  ".utf8)
            JSONValue.string(key).append(to: &out, indent: 1)
            out.append(contentsOf: ": ".utf8)
            value.append(to: &out, indent: 1)
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: "\n  \"actions\": [".utf8)
        var first = true
        try forEachAction { action in
            out.append(contentsOf: (first ? "\n    " : ",\n    ").utf8)
            first = false
            action.append(to: &out, indent: 2)
            if out.count >= 1 << 20 {
                try write(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        out.append(contentsOf: (first ? "]\n}\n" : "\n  ]\n}\n").utf8)
        try write(out)
    }

    /// Every member of the plan's JSON object but its actions, in order.
    private func headerMembers() -> [(String, JSONValue)] {
        let s = summary
        var extra: [(String, JSONValue)] = []
        for (name, n) in extraBlobs.sorted(by: { $0.key < $1.key }) { extra.append(("blobs:\(name)", .int(Int64(n)))) }
        for (name, n) in extraEntities.sorted(by: { $0.key < $1.key }) { extra.append(("entities:\(name)", .int(Int64(n)))) }
        var members: [(String, JSONValue)] = [
            ("version", .int(Self.formatVersion)),
            ("target", header.target.json()),
            ("source", .string(header.source.rawValue)),
            ("dataset", .string(header.dataset)),
            ("datasetDirectory", .string(header.datasetDirectory)),
            ("seed", header.seed.map(JSONValue.uint) ?? .null),
            ("window", header.window.map { .object([("from", .string($0.from.iso8601)), ("to", .string($0.to.iso8601))]) } ?? .null),
            ("counts", .object(header.counts.sorted(by: { $0.key < $1.key }).map { ($0.key, .int(Int64($0.value))) })),
            ("access", header.access.map { .string($0.rawValue) } ?? .null),
            ("prune", .bool(header.prune)),
        ]
        if let shard = header.shard { members.append(("shard", .string(shard.description))) }
        if let now = header.now { members.append(("now", .string(now.iso8601))) }
        if let move = header.nowMove {
            members.append(
                (
                    "nowMove",
                    .object([
                        ("from", .string(move.from.iso8601)), ("to", .string(move.to.iso8601)),
                        ("recordedAt", .string(move.recordedAt.iso8601)),
                    ])
                ))
        }
        members += [
            ("digests", .object([("desired", .string(header.desiredDigest)), ("observed", .string(header.observedDigest))])),
            (
                "summary",
                .object([
                    ("create", .int(Int64(s.create))), ("update", .int(Int64(s.update))),
                    ("delete", .int(Int64(s.delete))), ("unchanged", .int(Int64(s.unchanged))),
                ])
            ),
            ("notInDataset", .object(extra)),
        ]
        return members
    }

    /// Calls `body` with each action's JSON, in execution order.
    private func forEachAction(_ body: (JSONValue) throws -> Void) rethrows {
        // A JSON plan lists every action: one that counted some cannot be written as one.
        precondition(isWhole, "a plan that counts actions it does not hold cannot be written as JSON")
        for c in containers {
            var members: [(String, JSONValue)] = [
                ("kind", .string("container")), ("name", .string(c.name)), ("action", .string(c.change.rawValue)),
                ("access", .string(c.access.rawValue)),
            ]
            if let current = c.currentAccess { members.append(("currentAccess", .string(current.rawValue))) }
            if c.metadata != nil { members.append(("differs", .array([.string("metadata")]))) }
            try body(.object(members))
        }
        for b in blobs {
            var members: [(String, JSONValue)] = [
                ("kind", .string("blob")), ("container", .string(b.container)), ("name", .string(b.name)),
                ("action", .string(b.change.rawValue)),
            ]
            if let blob = b.blob {
                members += [("md5", .string(blob.md5Base64)), ("contentType", .string(blob.contentType)), ("size", .int(Int64(blob.size)))]
            }
            if b.change != .create {
                members.append(("currentMd5", b.currentMD5.map(JSONValue.string) ?? .null))
                if b.change == .update { members.append(("currentContentType", b.currentContentType.map(JSONValue.string) ?? .null)) }
            }
            if !b.reasons.isEmpty { members.append(("differs", .array(b.reasons.map(JSONValue.string)))) }
            try body(.object(members))
        }
        for t in tables {
            var members: [(String, JSONValue)] = [("kind", .string("table")), ("name", .string(t.name)), ("action", .string(t.change.rawValue))]
            if let n = unchangedEntities[t.name], n > 0 { members.append(("unchangedEntities", .int(Int64(n)))) }
            if let n = extraEntities[t.name], n > 0 { members.append(("entitiesNotInDataset", .int(Int64(n)))) }
            try body(.object(members))
        }
        for e in [entities, entityDeletes].joined() {
            var members: [(String, JSONValue)] = [
                ("kind", .string("entity")), ("table", .string(e.table)), ("partitionKey", .string(e.partitionKey)),
                ("rowKey", .string(e.rowKey)), ("action", .string(e.change.rawValue)),
            ]
            if let kind = e.kind { members.append(("entityKind", .string(kind))) }
            if let desiredRowKey = e.desiredRowKey {
                members.append(("matchedBy", .string("naturalKey")))
                members.append(("datasetRowKey", .string(desiredRowKey)))
            }
            if !e.naturalKey.isEmpty { members.append(("naturalKey", .object(e.naturalKey.map { ($0.0, .string($0.1)) }))) }
            if e.change == .update {
                members.append(("changes", .object(e.changes.map { ($0.name, Self.json($0)) })))
            }
            try body(.object(members))
        }
    }

    private static func json(_ change: PropertyChange) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("from", change.from.map { .string($0.text) } ?? .null),
            ("to", change.to.map { .string($0.text) } ?? .null),
        ]
        let types = [change.from, change.to].compactMap { $0?.type }
        if types.contains(where: { $0 != .string }) {
            members.append(("fromType", change.from.map { .string($0.type.rawValue) } ?? .null))
            members.append(("toType", change.to.map { .string($0.type.rawValue) } ?? .null))
        }
        return .object(members)
    }
}

extension PlanTarget {
    package func json() -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("account", .string(account)), ("blobEndpoint", .string(blobEndpoint)),
            ("tableEndpoint", .string(tableEndpoint)),
        ]
        if let embeddedDataDirectory { members.append(("embeddedDataDirectory", .string(embeddedDataDirectory))) }
        return .object(members)
    }
}

/// Why a saved plan cannot be used.
public struct PlanFileError: Error, Sendable, CustomStringConvertible, PersonFacingError {
    public var phrase: Phrase
    init(_ phrase: Phrase) { self.phrase = phrase }
}

extension PlanHeader {
    /// Reads the header of a saved plan: what it was made from and against.
    public static func read(contentsOf file: URL) throws(PlanFileError) -> PlanHeader {
        let path = file.relativePathForMessages
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw PlanFileError("\(path): cannot read the plan file; check the path")
        }
        let root: JSONValue
        do { root = try JSONParser.parse(Array(data)) } catch {
            throw PlanFileError("\(path): not a plan file (\(error)); save one with \(Setting.savePlan)")
        }
        func string(_ node: JSONValue?, _ name: String) throws(PlanFileError) -> String {
            guard let s = node?.stringValue else { throw PlanFileError("\(path): not a plan file: '\(name)' is missing or not a string") }
            return s
        }
        guard case .number(let version)? = root["version"], version == String(Plan.formatVersion) else {
            throw PlanFileError("\(path): not a version \(Plan.formatVersion) azseed plan; make it again with \(Setting.savePlan)")
        }
        let target = root["target"]
        var embedded: String?
        if let node = target?["embeddedDataDirectory"] { embedded = try string(node, "target.embeddedDataDirectory") }
        let planTarget = PlanTarget(
            account: try string(target?["account"], "target.account"),
            blobEndpoint: try string(target?["blobEndpoint"], "target.blobEndpoint"),
            tableEndpoint: try string(target?["tableEndpoint"], "target.tableEndpoint"),
            embeddedDataDirectory: embedded)
        guard let source = PlanHeader.Source(rawValue: try string(root["source"], "source")) else {
            throw PlanFileError("\(path): not a plan file: unknown 'source'")
        }
        var seed: UInt64?
        if case .number(let seedText)? = root["seed"] {
            guard let value = UInt64(seedText) else { throw PlanFileError("\(path): not a plan file: 'seed' is not a UInt64") }
            seed = value
        }
        var window: ResolvedWindow?
        if let node = root["window"], node != .null {
            guard let from = EdmDateTime(iso8601: try string(node["from"], "window.from")),
                let to = EdmDateTime(iso8601: try string(node["to"], "window.to"))
            else {
                throw PlanFileError("\(path): not a plan file: the window is not two ISO 8601 timestamps")
            }
            window = ResolvedWindow(from: from, to: to)
        }
        var counts: [String: Int] = [:]
        if case .object(let members)? = root["counts"] {
            for (name, value) in members {
                guard case .number(let n) = value, let count = Int(n) else {
                    throw PlanFileError("\(path): not a plan file: counts.\(name) is not a number")
                }
                counts[name] = count
            }
        }
        var access: PublicAccess?
        if let node = root["access"], node != .null {
            guard let level = PublicAccess(rawValue: try string(node, "access")) else {
                throw PlanFileError("\(path): not a plan file: unknown access level")
            }
            access = level
        }
        guard case .bool(let prune)? = root["prune"] else { throw PlanFileError("\(path): not a plan file: 'prune' is missing") }
        var shard: Shard?
        if let node = root["shard"] {
            guard let parsed = node.stringValue.flatMap(Shard.init) else { throw PlanFileError("\(path): not a plan file: 'shard' is not I/N") }
            shard = parsed
        }
        var header = PlanHeader(
            target: planTarget, source: source, dataset: try string(root["dataset"], "dataset"),
            datasetDirectory: try string(root["datasetDirectory"], "datasetDirectory"),
            seed: seed, window: window, counts: counts, access: access, prune: prune,
            desiredDigest: try string(root["digests"]?["desired"], "digests.desired"),
            observedDigest: try string(root["digests"]?["observed"], "digests.observed"))
        header.shard = shard
        if let node = root["now"] {
            guard let now = node.stringValue.flatMap(EdmDateTime.init(iso8601:)) else {
                throw PlanFileError("\(path): not a plan file: 'now' is not an ISO 8601 timestamp")
            }
            header.now = now
        }
        return header
    }
}
