import AzureStorage
import Foundation

/// The dataset written out: summary comments, containers, tables and kinds.
extension Inference {
    // MARK: - YAML

    func yaml() -> String {
        var out: [String] = []
        out.append(
            Self.comment(
                "Scanned by azseed from \(input.source): \(input.containers.count) container(s), \(Set(kinds.map(\.observation.table)).count) table(s), \(kinds.count) partition(s)."
            ))
        out.append(
            input.copyValues
                ? "# Each partition is a kind: listed rows when it held at most \(input.sample) entities (\(input.names(.sampleSize))), else generated with its observed count (\(input.names(.copyValues)))."
                : "# Each partition is a kind generated with its observed count; no value that identifies a person or is seen in fewer than \(ValuePrivacy.minimumEntities) entities was copied."
        )
        for kind in kinds {
            out.append(
                Self.comment(
                    "  \(kind.name): partition '\(kind.partition)' of table '\(kind.observation.table)', \(kind.observation.count) entities, \(kind.rows ? "rows" : "generated"); key \(kind.key.joined(separator: ", ")) — \(kind.keyReason)"
                ))
        }
        if !summary.isEmpty {
            out.append("# What was inferred and why:")
            out += summary.map { Self.comment("  \($0)") }
        }
        if !input.containers.isEmpty {
            out.append(
                input.copiedBlobs
                    ? "# Blobs: copied from the account (\(input.names(.copyBlobs)))."
                    : input.containers.contains(where: { !$0.renamed.isEmpty })
                        ? "# Blobs: placeholders under made-up names (blob-1, blob-2, … with the real extensions), of the same content types and sizes; \(input.names(.copyBlobs)) copies the real ones, names included."
                        : "# Blobs: placeholders of the same names, content types (by extension) and sizes; \(input.names(.copyBlobs)) copies the real ones."
            )
        }
        out.append("name: \(Self.quoted(input.name))")
        out.append("seed: 1")
        out.append("window: \(window())")
        if !templates.isEmpty { out.append("templates: templates") }
        if !input.containers.isEmpty {
            out.append("")
            out.append("containers:")
            for container in input.containers {
                out.append("  - name: \(Self.name(container.name))")
                out.append("    access: \(container.access.rawValue)")
                if !container.blobs.isEmpty { out.append("    files: \(Self.quoted("blobs/\(container.name)/"))") }
                if !container.properties.isEmpty { out.append("    properties: \(Self.quoted(DatasetInference.propertiesFile(container.name)))") }
                if let metadata = container.metadata {
                    let pairs = metadata.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                    out.append("    metadata: { \(pairs.map { "\(Self.name($0.key)): \(Self.quoted($0.value))" }.joined(separator: ", ")) }")
                }
            }
        }
        guard !kinds.isEmpty else { return out.joined(separator: "\n") + "\n" }
        out.append("")
        out.append("tables:")
        let tables = kinds.map(\.observation.table).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        for table in tables {
            out.append("  - name: \(Self.name(table))")
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
        guard let file = kind.copiedFile else { return inferredKindYAML(kind) }
        // The entities as they are; the kind as inferred beside it, to generate instead.
        let inferred = inferredKindYAML(kind).dropFirst(2).filter { !$0.isEmpty }
        return [
            "      - name: \(kind.name)", "        partition: \(Self.quoted(kind.partition))",
            "        entities: \(Self.quoted(file))   # its \(kind.observation.count) entities as they are (\(input.names(.copyValues)))",
            "        # To generate entities of this shape instead, replace 'entities' with the lines below — and do the same",
            "        # for every kind it references or that references it (a ref reads generated kinds; copied",
            "        # entities hold the account's RowKeys, which generated kinds do not have):",
        ] + inferred.map { "        #" + $0.dropFirst(7) } + [""]
    }

    /// A kind as inferred: rows or a count, and its fields.
    func inferredKindYAML(_ kind: KindDraft) -> [String] {
        let o = kind.observation
        var out = ["      - name: \(kind.name)", "        partition: \(Self.quoted(kind.partition))"]
        out.append("        key: [\(kind.key.map(Self.name).joined(separator: ", "))]   " + Self.comment(kind.keyReason))
        if kind.rows {
            var types: [String] = []
            for column in kind.columns where kind.helperColumns.allSatisfy({ $0.name != column }) {
                let t = o.property(column)!.type
                if ![.string, .int32, .boolean].contains(t) { types.append("\(Self.name(column)): \(t.rawValue)") }
            }
            out.append("        rows:")
            for e in o.entities ?? [] {
                let cells = kind.columns.map { column -> String in
                    if let helper = kind.helperColumns.first(where: { $0.name == column }) {
                        return "\(Self.name(column)): \(Self.quoted(helper.values[e.rowKey] ?? ""))"
                    }
                    // A row holds a column in one EDM type: a value of another type (kept
                    // exactly by `entities:`) is left off this row.
                    guard let value = e[column], value.type == o.property(column)!.type else { return "\(Self.name(column)): ~" }
                    return "\(Self.name(column)): \(Self.literal(value))"
                }
                out.append("          - { \(cells.joined(separator: ", ")) }")
            }
            if !types.isEmpty { out.append("        types: { \(types.joined(separator: ", ")) }") }
        } else {
            out.append("        count: \(o.count)")
        }
        if !kind.fields.isEmpty {
            out.append("        fields:")
            for field in kind.fields { out.append("          \(Self.name(field.name)): \(field.yaml)") }
        }
        if !kind.omit.isEmpty { out.append("        omit: [\(kind.omit.map(Self.name).joined(separator: ", "))]") }
        out.append("")
        return out
    }

    /// Every date seen, from its day to just after the last one.
    func window() -> String {
        guard let (from, to) = windowRange() else { return "{ from: today, days: 1 }" }
        return "{ from: \(String(EdmDateTime(ticks: from).shortISO8601.prefix(10))), to: \(EdmDateTime(ticks: to).shortISO8601) }"
    }

    func windowRange() -> (Int64, Int64)? {
        var low: Int64?
        var high: Int64?
        var step = EdmDateTime.ticksPerDay
        var dates = 0
        for kind in kinds {
            for name in kind.observation.propertyNames {
                guard let p = kind.observation.property(name), let a = p.minTicks, let b = p.maxTicks else { continue }
                dates += p.present
                low = min(low ?? a, a)
                high = max(high ?? b, b)
                step = min(step, max(p.dateResolution, EdmDateTime.ticksPerSecond))
            }
        }
        guard let low, let high else { return nil }
        // Ended before 10000-01-01: a "never" of 9999-12-31T23:59:59.9999999 stays in range.
        // Without copied values both ends are whole days strictly outside every date seen (the
        // first and last are one entity's each), within Azure's range.
        if !input.copyValues { return ValuePrivacy.dateWindow(low, high, few: dates < ValuePrivacy.minimumEntities) }
        return (low - low % EdmDateTime.ticksPerDay, min(high + step, EdmDateTime.endOfRange.ticks - 1))
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
        // NaN and the infinities as Azure spells them, in quotes: the column's type reads them.
        case .double(let d) where !d.isFinite: quoted(EdmValue.double(d).text)
        case .double(let d):
            EdmValue.double(d).text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
                ? EdmValue.double(d).text : EdmValue.double(d).text + ".0"
        default: quoted(value.text)
        }
    }

    /// `text` as a YAML double-quoted scalar that loads back byte for byte: besides `"` and
    /// `\`, every character YAML would fold, break a line at, strip or refuse is escaped —
    /// C0 and C1 controls (NEL included), DEL, U+2028 and U+2029 (libyaml ends a line there),
    /// the byte-order mark and the non-characters U+FFFE and U+FFFF.
    /// A leading byte-order mark is written `"\uFEFF…"`, as any YAML reader reads it; the YAML
    /// library azseed uses drops it, and the dataset loader puts it back (``YAMLReader``).
    static func quoted(_ text: String) -> String {
        "\"" + escaped(text) + "\""
    }

    /// A name (container, table, property, kind field) as YAML writes it: plain when it is an
    /// identifier YAML reads back as that same string, else double-quoted (``quoted(_:)``).
    static func name(_ text: String) -> String {
        let bytes = Array(text.utf8)
        let isLetter = { (b: UInt8) in (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F }
        let plain =
            !bytes.isEmpty && bytes.count <= 64 && isLetter(bytes[0])
            && bytes.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
            && !["true", "false", "yes", "no", "on", "off", "null", "y", "n"].contains(text.lowercased())
        return plain ? text : quoted(text)
    }

    /// Dotted names (`field.Property`, a template's file name) plain when every part is a
    /// plain name, else the whole double-quoted.
    static func path(_ parts: String...) -> String {
        let text = parts.joined(separator: ".")
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return pieces.allSatisfy({ name($0) == $0 }) ? text : quoted(text)
    }

    /// A comment line (`# …`) holding `text` with the same escapes, so no scanned value can
    /// end the comment and start YAML of its own.
    static func comment(_ text: String) -> String {
        "# " + escaped(text)
    }

    static func escaped(_ text: String) -> String { Printable.escaped(text) }
}
