import AzureStorage
import Foundation

/// A container as a scan saw it: its access level and blobs (names, sizes, types).
public struct ScannedContainer: Sendable {
    public var name: String
    public var access: PublicAccess
    public var blobs: [(name: String, size: Int, contentType: String)]

    public init(name: String, access: PublicAccess, blobs: [(name: String, size: Int, contentType: String)]) {
        self.name = name
        self.access = access
        self.blobs = blobs
    }
}

/// What a scan read, ready to become a dataset.
public struct ScanInput: Sendable {
    /// The dataset's name (it namespaces the RowKeys it generates).
    public var name: String
    /// Where the data came from, for the summary (an endpoint without its query).
    public var source: String
    /// The blob endpoint of the scanned account, to recognise blob URLs in entities.
    public var blobEndpoint: String
    public var containers: [ScannedContainer]
    public var partitions: [PartitionObservation]
    /// At most this many entities' values are copied per partition.
    public var sample: Int
    /// Whether the container folders hold the blobs' own bytes (else placeholders).
    public var copiedBlobs: Bool

    public init(name: String, source: String, blobEndpoint: String, containers: [ScannedContainer], partitions: [PartitionObservation],
                sample: Int, copiedBlobs: Bool) {
        self.name = name
        self.source = source
        self.blobEndpoint = blobEndpoint
        self.containers = containers
        self.partitions = partitions
        self.sample = sample
        self.copiedBlobs = copiedBlobs
    }
}

/// A dataset inferred from a scan: `dataset.yaml` (its first lines say what was inferred and
/// why), the templates it names, and what the scan noticed but could not express.
public struct InferredDataset: Sendable {
    public var yaml: String
    public var templates: [(name: String, text: String)]
    public var summary: [String]
}

/// Infers a dataset that reproduces the shape of what a scan read (README, "azseed scan"):
/// per table partition a kind — listed `rows` when it holds at most `sample` entities,
/// generated (`count`) otherwise — with each property's EDM type and presence; properties
/// holding another partition's RowKeys (or unique values) become `ref` + `from`, and values
/// copied from the referenced entity `from` it too; blob URLs become `blobUrl`; text that is
/// other properties' values in fixed words becomes a template; few distinct values a weighted
/// `pick`; numbers a range or a sequence; dates a window at their resolution; other text a
/// sampled list. A natural key is proposed from properties whose values are unique.
public enum DatasetInference {
    public static func infer(_ input: ScanInput) -> InferredDataset {
        var engine = Inference(input: input)
        return engine.run()
    }
}

private struct Reference {
    var field: String
    var target: Int
    /// The target's property the values match: "RowKey" or a unique property.
    var via: String
    var property: String
}

private struct KindDraft {
    var observation: PartitionObservation
    var name: String
    var rows: Bool
    var references: [Reference] = []
    /// Property → YAML of its field (generated properties, refs and helpers), in order.
    var fields: [(name: String, yaml: String)] = []
    var columns: [String] = []
    var omit: [String] = []
    var key: [String] = []
    var keyReason = ""
    /// How many distinct values each generated field can take (its share of the key space).
    var domains: [String: Double] = [:]
    var notes: [String] = []
    /// Row helper columns: name → per entity value (blob names).
    var helperColumns: [(name: String, values: [String: String])] = []
}

private struct Inference {
    let input: ScanInput
    var kinds: [KindDraft] = []
    var templates: [(name: String, text: String)] = []
    var summary: [String] = []

    init(input: ScanInput) { self.input = input }

    /// The dataset's window (every date seen), in ticks.
    var windowTicks: (from: Int64, to: Int64) = (0, EdmDateTime.ticksPerDay)

    mutating func run() -> InferredDataset {
        let observations = input.partitions.sorted { ($0.table, $0.partition) < ($1.table, $1.partition) }
        var used = Set<String>()
        for var observation in observations {
            observation.sortKept()
            var name = Self.kindName(observation.partition)
            if used.contains(name) { name = Self.kindName(observation.table) + "_" + name }
            while used.contains(name) { name += "_" }
            used.insert(name)
            kinds.append(KindDraft(observation: observation, name: name, rows: observation.count <= input.sample && observation.entities != nil))
        }
        findReferences()
        windowTicks = windowRange() ?? windowTicks
        for index in kinds.indices { describe(index) }
        return InferredDataset(yaml: yaml(), templates: templates, summary: summary)
    }

    // MARK: - names

    static func kindName(_ text: String) -> String {
        var letters = String(text.unicodeScalars.filter { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") })
        if letters.isEmpty || letters.first!.isNumber { letters = "kind" + letters }
        letters = letters.prefix(1).lowercased() + letters.dropFirst()
        if letters.count > 3, letters.hasSuffix("s"), !letters.hasSuffix("ss") { letters.removeLast() }
        return letters
    }

    // MARK: - references

    /// Properties whose every value is a RowKey, or a unique property's value, of another
    /// partition. Edges that would close a cycle are left out (kinds are made in dependency order).
    mutating func findReferences() {
        var edges: [Int: Set<Int>] = [:]
        func reaches(_ from: Int, _ to: Int) -> Bool {
            var stack = [from], seen = Set<Int>()
            while let k = stack.popLast() {
                if k == to { return true }
                if seen.insert(k).inserted { stack += edges[k] ?? [] }
            }
            return false
        }
        for a in kinds.indices {
            let source = kinds[a].observation
            for name in source.propertyNames {
                guard let p = source.property(name), let values = p.distinct, !values.isEmpty else { continue }
                var found: (Int, String)?
                for b in kinds.indices where b != a && !reaches(b, a) {
                    let target = kinds[b].observation
                    if p.type == .string, let keys = target.rowKeys,
                       values.keys.allSatisfy({ if case .string(let s) = $0 { keys.contains(ExactString(s)) } else { false } }) {
                        found = (b, "RowKey")
                        break
                    }
                    for q in target.propertyNames where !(q.isExactly(name) && false) {
                        guard let t = target.property(q), t.type == p.type, t.present == target.count, t.distinctCount == target.count,
                              [.string, .int32, .int64, .guid].contains(t.type), let targetValues = t.distinct else { continue }
                        if values.keys.allSatisfy({ targetValues[$0] != nil }) {
                            found = (b, q)
                            break
                        }
                    }
                    if found != nil { break }
                }
                guard let (b, via) = found else { continue }
                var field = kinds[b].name
                var n = 2
                while source.property(field) != nil || kinds[a].references.contains(where: { $0.field == field }) {
                    field = kinds[b].name + String(n)
                    n += 1
                }
                kinds[a].references.append(Reference(field: field, target: b, via: via, property: name))
                edges[a, default: []].insert(b)
            }
        }
    }

    /// The referenced entity of `entity` through `reference`, when the target kept its entities.
    func referenced(_ entity: TableEntity, _ reference: Reference) -> TableEntity? {
        guard let value = entity[reference.property], let targets = kinds[reference.target].observation.entities else { return nil }
        if reference.via == "RowKey" {
            guard case .string(let key) = value else { return nil }
            return targets.first { $0.rowKey.isExactly(key) }
        }
        return targets.first { $0[reference.via] == value }
    }

    // MARK: - one kind

    mutating func describe(_ index: Int) {
        var kind = kinds[index]
        let o = kind.observation
        let entities = kind.rows ? (o.entities ?? o.sample) : o.sample
        var handled = Set<String>()

        // References: the ref field, then the property it fills. A second reference to the
        // same kind that always names the same entity as the first is a value copied from it.
        var refFields: [(name: String, yaml: String)] = []
        var kept: [Reference] = []
        for reference in kind.references {
            if let first = kept.first(where: { $0.target == reference.target }),
               entities.allSatisfy({ e in e[reference.property] == nil || referenced(e, first).map { $0[reference.via] == e[reference.property] } ?? false }) {
                refFields.append((reference.property, "{ from: \(first.field).\(reference.via) }"))
                handled.insert(reference.property)
                summary.append("\(kind.name).\(reference.property) equals the referenced \(kinds[reference.target].name)'s \(reference.via) in every sampled entity: from")
                continue
            }
            kept.append(reference)
            refFields.append((reference.field, "{ ref: \(kinds[reference.target].name) }"))
            refFields.append((reference.property, "{ from: \(reference.field).\(reference.via) }"))
            kind.domains[reference.property] = Double(kinds[reference.target].observation.count)
            handled.insert(reference.property)
            summary.append("\(kind.name).\(reference.property) holds \(reference.via == "RowKey" ? "RowKeys" : reference.via + " values") of partition '\(kinds[reference.target].observation.partition)': ref + from")
        }
        kind.references = kept
        // Values copied from the referenced entity.
        for name in o.propertyNames where !handled.contains(name) {
            for reference in kind.references {
                let pairs = entities.compactMap { e -> (EdmValue, TableEntity)? in
                    guard let v = e[name], let r = referenced(e, reference) else { return nil }
                    return (v, r)
                }
                guard pairs.count >= 2 else { continue }
                let target = kinds[reference.target].observation
                if let q = target.propertyNames.first(where: { q in pairs.allSatisfy { $0.1[q] == $0.0 } }) {
                    refFields.append((name, "{ from: \(reference.field).\(q) }"))
                    handled.insert(name)
                    summary.append("\(kind.name).\(name) equals the referenced \(kinds[reference.target].name)'s \(q) in every sampled entity: from")
                    break
                }
            }
        }
        // Blob URLs and templates come last: they read the other fields.
        var derivedFields: [(name: String, yaml: String)] = []
        var helperFields: [(name: String, yaml: String)] = []
        for name in o.propertyNames where !handled.contains(name) {
            guard let p = o.property(name), p.type == .string, let (container, names) = blobURLs(name, entities, p) else { continue }
            let helper = uniqueName(name + "Blob", in: o)
            if kind.rows {
                kind.helperColumns.append((helper, names))
            } else {
                let list = Array(Set(names.values)).sorted { $0.byteOrder($1) < 0 }.prefix(input.sample)
                helperFields.append((helper, "{ pick: [\(list.map(Self.quoted).joined(separator: ", "))] }"))
            }
            derivedFields.append((name, "{ blobUrl: { container: \(container), name: \(Self.quoted("{{\(helper)}}")) } }"))
            kind.omit.append(helper)
            handled.insert(name)
            summary.append("\(kind.name).\(name) holds URLs of blobs in container '\(container)': blobUrl")
        }
        for name in o.propertyNames where !handled.contains(name) {
            guard let p = o.property(name), p.type == .string, entities.count >= 2, p.present == o.count,
                  (p.distinctCount ?? Int.max) > max(1, entities.count / 2) || kind.rows,
                  let template = inferTemplate(name, entities, kind) else { continue }
            let file = "\(kind.name)-\(name).mustache"
            templates.append((file, template))
            derivedFields.append((name, "{ template: \(file) }"))
            handled.insert(name)
            summary.append("\(kind.name).\(name) is the same words around \(Self.variables(template).joined(separator: ", ")) in every sampled entity: template \(file)")
        }
        kind.fields = refFields + helperFields
        if kind.rows {
            kind.columns = o.propertyNames.filter { !handled.contains($0) } + kind.helperColumns.map(\.name)
        } else {
            for name in o.propertyNames where !handled.contains(name) {
                kind.fields.append((name, generator(name, o.property(name)!, o, entities, &kind)))
            }
        }
        kind.fields += derivedFields
        chooseKey(&kind)
        if o.allRowKeysAreGUIDs, o.count > 0 {
            summary.append("\(kind.name): RowKeys are GUIDs; the dataset makes name-based ones from its key (\(kind.key.joined(separator: ", ")))")
        }
        kinds[index] = kind
    }

    func uniqueName(_ base: String, in o: PartitionObservation) -> String {
        var name = base
        while o.property(name) != nil { name += "_" }
        return name
    }

    /// The container and per-entity blob names when every value is a URL of a blob the scan listed.
    func blobURLs(_ name: String, _ entities: [TableEntity], _ p: PropertyObservation) -> (String, [String: String])? {
        guard !entities.isEmpty, !input.blobEndpoint.isEmpty else { return nil }
        for container in input.containers {
            let prefix = input.blobEndpoint + "/" + container.name + "/"
            let known = Set(container.blobs.map { ExactString($0.name) })
            var names: [String: String] = [:]
            var all = true
            for e in entities {
                guard case .string(let url)? = e[name] else { continue }
                guard url.hasPrefix(prefix), let blob = String(url.dropFirst(prefix.count)).removingPercentEncoding, known.contains(ExactString(blob)) else {
                    all = false
                    break
                }
                names[e.rowKey] = blob
            }
            if all, !names.isEmpty { return (container.name, names) }
        }
        return nil
    }

    /// The text of property `name` with other properties' values (and referenced entities'
    /// as `ref.Property`) replaced by `{{…}}`, when that gives one text for every entity.
    func inferTemplate(_ name: String, _ entities: [TableEntity], _ kind: KindDraft) -> String? {
        var result: String?
        for e in entities {
            guard case .string(let text)? = e[name], !text.contains("{{"), !text.contains("}}") else { return nil }
            var candidates: [(variable: String, value: String)] = []
            for (other, value) in e.properties where !other.isExactly(name) {
                if case .string(let s) = value, s.count >= 3 { candidates.append((other, s)) }
            }
            for reference in kind.references {
                guard let target = referenced(e, reference) else { continue }
                for (other, value) in target.properties {
                    if case .string(let s) = value, s.count >= 3 { candidates.append(("\(reference.field).\(other)", s)) }
                }
            }
            candidates.sort { a, b in a.value.count != b.value.count ? a.value.count > b.value.count : a.variable.byteOrder(b.variable) < 0 }
            var template = text
            var markers: [(String, String)] = []
            for (i, candidate) in candidates.enumerated() where template.contains(candidate.value) {
                let marker = "\u{1}\(i)\u{2}"
                template = template.replacingOccurrences(of: candidate.value, with: marker)
                markers.append((marker, "{{\(candidate.variable)}}"))
            }
            for (marker, variable) in markers { template = template.replacingOccurrences(of: marker, with: variable) }
            guard template.contains("{{") else { return nil }
            if let result, !result.isExactly(template) { return nil }
            result = template
        }
        return result
    }

    static func variables(_ template: String) -> [String] {
        var out: [String] = []
        var rest = Substring(template)
        while let open = rest.range(of: "{{"), let close = rest.range(of: "}}", range: open.upperBound..<rest.endIndex) {
            let v = String(rest[open.upperBound..<close.lowerBound])
            if !out.contains(v) { out.append(v) }
            rest = rest[close.upperBound...]
        }
        return out
    }

    // MARK: - generators

    mutating func generator(_ name: String, _ p: PropertyObservation, _ o: PartitionObservation, _ entities: [TableEntity], _ kind: inout KindDraft) -> String {
        let presence = p.present < o.count ? ", presence: \(Self.fraction(Double(p.present) / Double(o.count)))" : ""
        if presence.isEmpty == false { summary.append("\(kind.name).\(name) is on \(p.present) of \(o.count) entities: presence") }
        let type = p.type
        let typed = [.string, .int32, .boolean].contains(type) ? "" : ", type: \(type.rawValue)"
        kind.domains[name] = 1
        if let counts = p.byFrequency, counts.count == 1 {
            return "{ const: \(Self.literal(counts[0].value))\(typed)\(presence) }"
        }
        switch type {
        case .boolean:
            kind.domains[name] = Double(p.distinctCount ?? 2)
            return weightedPick(p.byFrequency ?? [], typed: typed, presence: presence)
        case .int32, .int64:
            if let counts = p.distinctCount, counts == o.count, p.present == o.count, let low = p.minInt, let high = p.maxInt, high - low == Int64(o.count - 1) {
                summary.append("\(kind.name).\(name) is \(low) to \(high), each once: sequence")
                kind.domains[name] = .infinity
                return "{ sequence: { start: \(low), step: 1 }, type: \(type.rawValue)\(presence) }"
            }
            if let counts = p.byFrequency, counts.count <= 20, counts.count < p.present {
                kind.domains[name] = Double(counts.count)
                return weightedPick(counts, typed: typed, presence: presence)
            }
            kind.domains[name] = Double((p.maxInt ?? 0) - (p.minInt ?? 0)) + 1
            return "{ int: [\(p.minInt ?? 0), \(p.maxInt ?? 0)], type: \(type.rawValue)\(presence) }"
        case .double:
            let low = p.minDouble ?? 0, high = p.maxDouble ?? 0
            return "{ double: [\(EdmValue.double(low).text), \(EdmValue.double(high > low ? high : low + 1).text)]\(presence) }"
        case .dateTime:
            kind.domains[name] = Double(windowTicks.to - windowTicks.from) / Double(max(p.dateResolution, EdmDateTime.ticksPerSecond))
            return "{ date: window, resolution: \(Self.resolutionName(p.dateResolution))\(presence) }"
        case .string:
            if let counts = p.byFrequency, counts.count <= min(input.sample, 50), counts.count < p.present {
                kind.domains[name] = Double(counts.count)
                return weightedPick(counts, typed: typed, presence: presence)
            }
            fallthrough
        default:
            // High-cardinality values: a list sampled from at most `sample` entities.
            var seen = Set<EdmValue>()
            let values = entities.compactMap { $0[name] }.filter { seen.insert($0).inserted }
            kind.domains[name] = Double(values.count)
            summary.append("\(kind.name).\(name) has \(p.distinctCount.map(String.init) ?? "over \(PropertyObservation.distinctLimit)") distinct values: a list of the \(values.count) seen in \(entities.count) sampled entities")
            return "{ pick: [\(values.map(Self.literal).joined(separator: ", "))]\(typed)\(presence) }"
        }
    }

    func weightedPick(_ counts: [(value: EdmValue, count: Int)], typed: String, presence: String) -> String {
        let list = counts.prefix(50)
        let values = list.map { Self.literal($0.value) }.joined(separator: ", ")
        if Set(list.map(\.count)).count == 1 { return "{ pick: [\(values)]\(typed)\(presence) }" }
        return "{ pick: [\(values)], weights: [\(list.map { String($0.count) }.joined(separator: ", "))]\(typed)\(presence) }"
    }

    // MARK: - keys

    /// A natural key from properties unique over every entity seen, else every keyable one.
    mutating func chooseKey(_ kind: inout KindDraft) {
        let o = kind.observation
        func unique(_ name: String) -> Bool {
            guard let p = o.property(name) else { return false }
            return p.present == o.count && p.distinctCount == o.count
        }
        if kind.rows {
            let rows = o.entities ?? []
            let candidates = kind.columns.filter { c in !kind.helperColumns.contains { $0.name == c } && unique(c) }
            let ranked = candidates.sorted { a, b in
                let (pa, pb) = (o.property(a)!, o.property(b)!)
                let (ia, ib) = ([.int32, .int64].contains(pa.type), [.int32, .int64].contains(pb.type))
                if ia != ib { return ia }
                return pa.maxLength != pb.maxLength ? pa.maxLength < pb.maxLength : a.byteOrder(b) < 0
            }
            if let best = ranked.first {
                kind.key = [best]
                kind.keyReason = "'\(best)' is unique in all \(rows.count) entities"
            } else {
                let stored = kind.columns.filter { c in rows.allSatisfy { $0[c] != nil } }
                kind.key = stored.isEmpty ? Array(kind.columns.prefix(1)) : stored
                kind.keyReason = "no property is unique on its own; the key is every column present in all rows"
            }
            return
        }
        let keyable = kind.fields.filter { field in
            !field.yaml.contains("presence:") && (field.yaml.hasPrefix("{ sequence") || field.yaml.hasPrefix("{ int") || field.yaml.hasPrefix("{ date")
                || field.yaml.hasPrefix("{ pick") || field.yaml.hasPrefix("{ from") || field.yaml.hasPrefix("{ const"))
                && !kind.omit.contains(field.name)
        }
        let rank: (String) -> Int = { yaml in
            yaml.hasPrefix("{ sequence") ? 0 : yaml.hasPrefix("{ int") ? 1 : yaml.hasPrefix("{ date") ? 2 : yaml.hasPrefix("{ from") ? 3 : 4
        }
        let needed = Double(o.count)
        let domains = kind.domains
        let ranked = keyable.filter { !$0.yaml.hasPrefix("{ const") }
            .sorted { rank($0.yaml) != rank($1.yaml) ? rank($0.yaml) < rank($1.yaml) : $0.name.byteOrder($1.name) < 0 }
        if let best = ranked.first(where: { unique($0.name) && (domains[$0.name] ?? 0) >= needed }) {
            kind.key = [best.name]
            kind.keyReason = "'\(best.name)' is unique in all \(o.count) entities"
        } else {
            // Properties together: unique ones first, until their values can make `count` distinct keys.
            var chosen: [String] = []
            var space = 1.0
            for field in ranked.sorted(by: { unique($0.name) && !unique($1.name) }) where space < needed {
                chosen.append(field.name)
                space *= max(domains[field.name] ?? 1, 1)
            }
            kind.key = chosen.isEmpty ? keyable.map(\.name) : chosen
            kind.keyReason = space >= needed
                ? "no property alone can tell \(o.count) entities apart; these together can"
                : "no properties can tell \(o.count) entities apart with the values sampled; raise --sample"
        }
        // Key fields draw from their whole domain, uniformly: no weights.
        for i in kind.fields.indices where kind.key.contains(kind.fields[i].name) && kind.fields[i].yaml.contains(", weights: [") {
            let yaml = kind.fields[i].yaml
            if let start = yaml.range(of: ", weights: ["), let end = yaml.range(of: "]", range: start.upperBound..<yaml.endIndex) {
                kind.fields[i].yaml = String(yaml[..<start.lowerBound] + yaml[end.upperBound...])
            }
        }
    }

    // MARK: - YAML

    func yaml() -> String {
        var out: [String] = []
        out.append("# Scanned by azseed from \(input.source): \(input.containers.count) container(s), \(Set(kinds.map(\.observation.table)).count) table(s), \(kinds.count) partition(s).")
        out.append("# Each partition is a kind: listed rows when it held at most \(input.sample) entities (--sample), else generated with its observed count.")
        for kind in kinds {
            out.append("#   \(kind.name): partition '\(kind.observation.partition)' of table '\(kind.observation.table)', \(kind.observation.count) entities, \(kind.rows ? "rows" : "generated"); key \(kind.key.joined(separator: ", ")) — \(kind.keyReason)")
        }
        if !summary.isEmpty {
            out.append("# What was inferred and why:")
            out += summary.map { "#   \($0)" }
        }
        if !input.containers.isEmpty {
            out.append(input.copiedBlobs ? "# Blobs: copied from the account (--copy-blobs)."
                                         : "# Blobs: placeholders of the same names, content types (by extension) and sizes; --copy-blobs copies the real ones.")
        }
        out.append("name: \(Self.quoted(input.name))")
        out.append("seed: 1")
        out.append("window: \(window())")
        if !templates.isEmpty { out.append("templates: templates") }
        if !input.containers.isEmpty {
            out.append("")
            out.append("containers:")
            for container in input.containers {
                out.append("  - name: \(container.name)")
                out.append("    access: \(container.access.datasetName)")
                if !container.blobs.isEmpty { out.append("    files: blobs/\(container.name)/") }
            }
        }
        guard !kinds.isEmpty else { return out.joined(separator: "\n") + "\n" }
        out.append("")
        out.append("tables:")
        let tables = kinds.map(\.observation.table).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        for table in tables {
            out.append("  - name: \(table)")
            out.append("    kinds:")
            for kind in dependencyOrder() where kind.observation.table == table {
                out += kindYAML(kind)
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// Kinds with the kinds they reference first.
    func dependencyOrder() -> [KindDraft] {
        var placed: [Int] = []
        func place(_ i: Int) {
            if placed.contains(i) { return }
            for reference in kinds[i].references { place(reference.target) }
            placed.append(i)
        }
        for i in kinds.indices { place(i) }
        return placed.map { kinds[$0] }
    }

    func kindYAML(_ kind: KindDraft) -> [String] {
        let o = kind.observation
        var out = ["      - name: \(kind.name)", "        partition: \(Self.quoted(o.partition))"]
        out.append("        key: [\(kind.key.joined(separator: ", "))]   # \(kind.keyReason)")
        if kind.rows {
            var types: [String] = []
            for column in kind.columns where kind.helperColumns.allSatisfy({ $0.name != column }) {
                let t = o.property(column)!.type
                if ![.string, .int32, .boolean].contains(t) { types.append("\(column): \(t.rawValue)") }
            }
            out.append("        rows:")
            for e in o.entities ?? [] {
                let cells = kind.columns.map { column -> String in
                    if let helper = kind.helperColumns.first(where: { $0.name == column }) { return "\(column): \(Self.quoted(helper.values[e.rowKey] ?? ""))" }
                    guard let value = e[column] else { return "\(column): ~" }
                    let t = o.property(column)!.type
                    return "\(column): \(value.type == t ? Self.literal(value) : Self.quoted(value.text))"
                }
                out.append("          - { \(cells.joined(separator: ", ")) }")
            }
            if !types.isEmpty { out.append("        types: { \(types.joined(separator: ", ")) }") }
        } else {
            out.append("        count: \(o.count)")
        }
        if !kind.fields.isEmpty {
            out.append("        fields:")
            for field in kind.fields { out.append("          \(field.name): \(field.yaml)") }
        }
        if !kind.omit.isEmpty { out.append("        omit: [\(kind.omit.joined(separator: ", "))]") }
        out.append("")
        return out
    }

    /// Every date seen, from its day to just after the last one.
    func window() -> String {
        guard let (from, to) = windowRange() else { return "{ from: today, days: 1 }" }
        return "{ from: \(String(EdmDateTime(ticks: from).shortISO8601.prefix(10))), to: \(EdmDateTime(ticks: to).shortISO8601) }"
    }

    func windowRange() -> (Int64, Int64)? {
        var low: Int64?, high: Int64?, step = EdmDateTime.ticksPerDay
        for kind in kinds {
            for name in kind.observation.propertyNames {
                guard let p = kind.observation.property(name), let a = p.minTicks, let b = p.maxTicks else { continue }
                low = min(low ?? a, a)
                high = max(high ?? b, b)
                step = min(step, max(p.dateResolution, EdmDateTime.ticksPerSecond))
            }
        }
        guard let low, let high else { return nil }
        return (low - low % EdmDateTime.ticksPerDay, high + step)
    }

    static func resolutionName(_ ticks: Int64) -> String {
        switch ticks {
        case EdmDateTime.ticksPerDay: "day"
        case 3600 * EdmDateTime.ticksPerSecond: "hour"
        case EdmDateTime.ticksPerMinute: "minute"
        default: "second"
        }
    }

    static func fraction(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return EdmValue.double(min(max(rounded, 0.001), 0.999)).text
    }

    /// A value as dataset YAML writes it: text in double quotes (JSON escapes are YAML's too).
    static func literal(_ value: EdmValue) -> String {
        switch value {
        case .int32(let n): String(n)
        case .int64(let n): String(n)
        case .boolean(let b): b ? "true" : "false"
        case .double(let d): EdmValue.double(d).text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? EdmValue.double(d).text : EdmValue.double(d).text + ".0"
        default: quoted(value.text)
        }
    }

    static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        JSONText.appendString(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

extension PublicAccess {
    /// The word dataset.yaml uses for it.
    var datasetName: String { rawValue }
}
