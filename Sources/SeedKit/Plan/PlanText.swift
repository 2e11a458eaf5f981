import AzureStorage

/// The plan as a `terraform plan`-like diff: `+` create, `~` update, `-` delete, `=` an
/// existing entity recognised by its natural key, then one summary line.
public struct PlanTextRenderer: Sendable {
    /// ANSI colours (only when printing to a terminal).
    public var colour: Bool
    /// At most this many creates (and deletes) are listed per kind; JSON lists them all.
    public var listLimit: Int
    /// How many creates (and deletes) of each kind are listed unless told otherwise.
    public static let defaultListLimit = 20

    /// How the remedies' settings are spelled (`--prune` from azseed).
    public var names: SettingNames
    /// A reset's plan: every delete is the reset's, not a blob or entity the dataset lacks.
    public var reset = false

    public init(colour: Bool = false, listLimit: Int = Self.defaultListLimit, names: SettingNames = .library) {
        self.colour = colour
        self.listLimit = listLimit
        self.names = names
    }

    public func render(_ plan: Plan) -> String {
        var lines: [String] = []
        let source = plan.header.source.noun
        let deleted = reset ? "reset" : "not in the \(source)"
        if let move = plan.header.nowMove, let window = plan.header.window {
            lines.append(
                mark(.update)
                    + " now \(move.from.shortISO8601) -> \(move.to.shortISO8601) (\(names(.referenceTime)); the ledger recorded the apply of \(move.recordedAt.shortISO8601)): window \(move.fromWindow.from.shortISO8601) to \(move.fromWindow.to.shortISO8601) -> \(window.from.shortISO8601) to \(window.to.shortISO8601)"
            )
        }
        for c in plan.containers {
            switch c.change {
            case .create: lines.append(mark(.create) + " container \(c.name) (access: \(c.access.rawValue))")
            case .update:
                var what: [String] = []
                if let current = c.currentAccess { what.append("access \(current.rawValue) -> \(c.access.rawValue)") }
                if c.metadata != nil { what.append("metadata differs") }
                lines.append(mark(.update) + " container \(c.name): \(what.joined(separator: ", "))")
            default: break
            }
        }
        for b in plan.blobs {
            let path = "\(b.container)/\(b.name)"
            switch b.change {
            case .create: lines.append(mark(.create) + " blob \(path) (\(b.blob!.contentType), \(b.blob!.size) bytes)")
            case .update where b.reasons == ["md5"] && b.blob!.md5.isEmpty:
                lines.append(mark(.update) + " blob \(path) (no Content-MD5 at the source, so it cannot be compared: copied again)")
            case .update:
                var why: [String] = []
                if b.reasons.contains("md5") { why.append("content differs: md5 \(b.currentMD5 ?? "none") -> \(b.blob!.md5Base64)") }
                if b.reasons.contains("contentType") { why.append("content type \(b.currentContentType ?? "none") -> \(b.blob!.contentType)") }
                if b.reasons.contains("headers") { why.append("content headers differ (Cache-Control, Content-Encoding, -Language or -Disposition)") }
                if b.reasons.contains("metadata") { why.append("metadata differs") }
                if b.reasons.contains("tier") {
                    why.append("access tier \(b.currentAccessTier ?? "none") -> \(b.blob!.stored?.accessTier ?? "none")")
                }
                lines.append(mark(.update) + " blob \(path) (\(why.joined(separator: "; ")))")
            case .delete: lines.append(mark(.delete) + " blob \(path) (\(deleted))")
            case .unchanged: break
            }
        }
        for t in plan.tables where t.change == .create { lines.append(mark(.create) + " table \(t.name)") }
        // Creates and deletes are listed up to `listLimit` per table, kind and change; the
        // rest are counted in one line each.
        var shown: [ListGroup: Int] = [:]
        var hidden: [ListGroup: Int] = [:]
        var hiddenOrder: [ListGroup] = []
        for e in [plan.entities, plan.entityDeletes].joined() {
            if e.change != .update && e.desiredRowKey == nil {
                let group = ListGroup(change: e.change, table: e.table, kind: e.kind)
                if shown[group, default: 0] >= listLimit {
                    if hidden[group] == nil { hiddenOrder.append(group) }
                    hidden[group, default: 0] += 1
                    continue
                }
                shown[group, default: 0] += 1
            }
            lines += entityLines(e, deleted: deleted)
        }
        // A large plan counted the rest instead of holding them (PlanRetention).
        for counted in plan.countedEntities {
            let group = ListGroup(change: counted.change, table: counted.table, kind: counted.kind)
            if hidden[group] == nil { hiddenOrder.append(group) }
            hidden[group, default: 0] += counted.count
        }
        for group in hiddenOrder {
            let what =
                group.kind.map { "\($0) entities" } ?? (group.change == .delete && !reset ? "entities not in the \(source)" : "entities")
            // A reset's JSON counts its deletes per kind; only a plan's lists every action.
            let hint = reset ? "" : " (\(names(.detailedPlan)) lists every action)"
            lines.append(mark(group.change) + " … and \(hidden[group]!) more \(what) in \(group.table) to \(group.change.rawValue)\(hint)")
        }
        for (container, n) in plan.extraBlobs.sorted(by: { $0.key < $1.key }) {
            lines.append("  note: \(n) blob\(n == 1 ? "" : "s") in container \(container) not in the \(source), kept (\(names(.prune)) deletes them)")
        }
        for (table, n) in plan.extraEntities.sorted(by: { $0.key < $1.key }) {
            let place = plan.header.source == .account ? "table \(table)" : "the \(source)'s partitions of table \(table)"
            lines.append("  note: \(n) entit\(n == 1 ? "y" : "ies") in \(place) not in the \(source), kept (\(names(.prune)) deletes them)")
        }
        let s = plan.summary
        let part = plan.header.shard.map { " (shard \($0))" } ?? ""
        if plan.isEmpty {
            lines.append(
                "No changes: \(plan.header.target.displayName) already matches the \(source)\(part) (\(s.unchanged) unchanged)"
                    + (plan.header.nowMove == nil ? "." : "; applying records the new reference time."))
        } else {
            if !lines.isEmpty { lines.append("") }
            lines.append("Plan\(part): \(s.create) to create, \(s.update) to update, \(s.delete) to delete, \(s.unchanged) unchanged.")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private struct ListGroup: Hashable {
        var change: PlanChange
        var table: String
        var kind: String?
    }

    private func entityLines(_ e: EntityAction, deleted: String) -> [String] {
        let key = e.naturalKey.map { "\($0.0)=\(quoted($0.1))" }.joined(separator: " ")
        let label = "entity \(e.table) (\(e.partitionKey), \(e.rowKey))" + (e.kind.map { " \($0)" } ?? "") + (key.isEmpty ? "" : " \(key)")
        var lines: [String] = []
        if let datasetKey = e.desiredRowKey {
            let sign = e.change == .update ? mark(.update) : paint("  =", "36")
            lines.append(
                sign
                    + " \(label): recognised by its natural key under a foreign RowKey (the dataset's would be \(datasetKey)); kept, not created again"
            )
        } else if e.change == .delete {
            lines.append(mark(.delete) + " \(label) (\(deleted))")
        } else {
            lines.append(mark(e.change) + " \(label)")
        }
        for change in e.changes {
            lines.append("      \(change.name): \(show(change.from)) -> \(show(change.to))")
        }
        return lines
    }

    private func show(_ value: EdmValue?) -> String {
        guard let value else { return "(absent)" }
        if case .string(let s) = value { return quoted(s) }
        return "\(value.text) (\(value.type.rawValue))"
    }

    private func quoted(_ s: String) -> String {
        let short = s.count > 60 ? String(s.prefix(57)) + "..." : s
        return "\"" + short.replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    private func mark(_ change: PlanChange) -> String {
        switch change {
        case .create: paint("  +", "32")
        case .update: paint("  ~", "33")
        case .delete: paint("  -", "31")
        case .unchanged: "   "
        }
    }

    private func paint(_ text: String, _ code: String) -> String {
        colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
