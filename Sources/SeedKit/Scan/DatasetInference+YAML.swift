import AzureStorage
import Foundation

/// The dataset written out: summary comments, containers, tables and kinds.
extension Inference {
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
                out.append("    access: \(container.access.rawValue)")
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
