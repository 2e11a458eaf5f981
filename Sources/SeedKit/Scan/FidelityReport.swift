import AzureStorage
import Foundation

/// How faithful a scanned dataset is: the dataset generated again at the observed counts,
/// observed with the same statistics as the account, compared per kind and property — type,
/// presence, distinct values, uniqueness, range — with a flag wherever the dataset would make
/// what the account does not show. `scan` prints the flags and writes the table beside the
/// dataset (`fidelity.md`).
public struct FidelityReport: Sendable {
    /// The report as Markdown.
    public var markdown: String
    /// The report in pictures: a self-contained HTML page of inline SVG (``FidelityPage``).
    public var html: String = ""
    /// One line per flagged property, for the terminal.
    public var flags: [String]
    /// Properties compared.
    public var compared: Int

    /// Distinct counts further apart than this (as a fraction of the account's, and by more
    /// than 2) are flagged.
    public static let distinctTolerance = 0.10
    /// Entities handed from the generating thread to the observing one at a time, at most,
    /// and at most about this many bytes of them (four chunks wait at most).
    static let chunkSize = 2_048
    static let chunkBytes = 1 << 20

    /// Generates `dataset` (its own counts: the observed ones) and compares it with `kinds`.
    /// Unless `copyValues`, nothing of the account's values is written: partitions go by the
    /// dataset's names and the account's ranges are not shown (only whether values left them).
    public static func compare(_ kinds: [ScannedKind], with dataset: Dataset, now: EdmDateTime, copyValues: Bool) throws -> FidelityReport {
        let made = try GeneratedDataset.make(dataset, options: GenerationOptions(now: now))
        var observations = PartitionObservations(sampleSize: 0, keepsKeys: false)
        // Made on one thread and observed on this one, a chunk at a time: the two stages are
        // about equal work, so the report takes half the time on two cores.
        try HandOff<(table: String, entities: [GeneratedEntity])>.run(capacity: 4) { put in
            for table in made.tables {
                var chunk: [GeneratedEntity] = []
                var bytes = 0
                chunk.reserveCapacity(chunkSize)
                try table.forEachEntity { entity in
                    chunk.append(entity)
                    bytes += StorageNames.entitySize(
                        partitionKey: entity.partitionKey, rowKey: entity.rowKey, properties: zip(entity.names, entity.values))
                    // Bounded by bytes too: copied entities may be up to 1 MiB each.
                    if chunk.count == chunkSize || bytes >= chunkBytes {
                        try put((table.name, chunk))
                        chunk.removeAll(keepingCapacity: true)
                        bytes = 0
                    }
                }
                if !chunk.isEmpty { try put((table.name, chunk)) }
            }
        } consume: { chunk in
            for entity in chunk.entities { observations.observe(entity, table: chunk.table) }
        }
        var regenerated: [ExactString: PartitionObservation] = [:]
        for observation in observations.all() { regenerated[ExactString(observation.table + "\u{0}" + observation.partition)] = observation }
        var lines = [
            "# Fidelity of the scanned dataset", "",
            "The dataset generated again at the observed counts (its own seed), observed like the account. Each cell is",
            "*account / regenerated*; ✗ marks where the dataset would make what the account does not show.", "",
        ]
        var flags: [String] = []
        var compared = 0
        var sections: [FidelityPage.Section] = []
        for kind in kinds {
            let account = kind.observation
            let again =
                regenerated[ExactString(kind.table + "\u{0}" + kind.partition)]
                ?? PartitionObservation(table: kind.table, partition: kind.partition, sampleSize: 1)
            let shown = copyValues ? account.partition : kind.partition
            // Markdown viewers render HTML: the account's text is escaped for it too.
            lines.append(
                "## \(kind.table) / \(MarkupEscape.text(Printable.escaped(shown))) → kind `\(kind.name)` (\(account.count) / \(again.count) entities)"
            )
            lines.append("")
            lines.append("| property | type | present | distinct | unique | range | |")
            lines.append("|---|---|---|---|---|---|---|")
            if again.count != account.count { flags.append("\(kind.name): \(again.count) entities made for \(account.count) seen") }
            let names = Set(account.propertyNames + again.propertyNames).sorted { $0.byteOrder($1) < 0 }
            sections.append(FidelityPage.Section(kind: kind, again: again, marks: [:]))
            for name in names {
                compared += 1
                defer {
                    if let flag = flags.last, flag.hasPrefix("\(kind.name).\(Printable.escaped(name)): ") {
                        sections[sections.count - 1].marks[name] = [String(flag.dropFirst("\(kind.name).\(Printable.escaped(name)): ".count))]
                    }
                }
                let a = account.property(name)
                let r = again.property(name)
                var marks: [String] = []
                guard let a else {
                    marks.append("not in the account (a helper the dataset adds)")
                    lines.append(row(name, nil, r, account, again, marks, copyValues: copyValues))
                    flags.append("\(kind.name).\(Printable.escaped(name)): \(marks.joined(separator: "; "))")
                    continue
                }
                guard let r else {
                    marks.append("never generated")
                    lines.append(row(name, a, nil, account, again, marks, copyValues: copyValues))
                    flags.append("\(kind.name).\(Printable.escaped(name)): \(marks.joined(separator: "; "))")
                    continue
                }
                if a.type != r.type { marks.append("type \(a.type.rawValue) made as \(r.type.rawValue)") }
                let (pa, pr) = (rate(a.present, account.count), rate(r.present, again.count))
                if abs(pa - pr) > 0.05 { marks.append("present on \(percent(pa)) in the account, \(percent(pr)) made") }
                // 10% apart, and at least 2 values (a partition of 10 drawn from a range may
                // show 8 or 10 by chance).
                if let da = a.distinctCount, let dr = r.distinctCount, da > 0,
                    abs(Double(dr) - Double(da)) > max(distinctTolerance * Double(da), 2)
                {
                    marks.append("\(da) distinct values in the account, \(dr) made")
                }
                // Doubles that happen to differ are no rule (a measurement); identifiers are.
                if a.present == account.count, a.allDistinct == true, r.allDistinct == false, a.type != .double {
                    marks.append("unique, made with repeats")
                }
                // Without copied values, ranges and dates are widened on purpose (rounded outward,
                // whole days): said in the table, not flagged.
                var note = ""
                if let outside = outside(a, r) {
                    if copyValues { marks.append(outside) } else { note = "wider than seen: rounded outward (values not copied)" }
                }
                lines.append(row(name, a, r, account, again, marks, copyValues: copyValues, note: note))
                if !marks.isEmpty { flags.append("\(kind.name).\(Printable.escaped(name)): \(marks.joined(separator: "; "))") }
            }
            lines.append("")
        }
        var report = FidelityReport(markdown: lines.joined(separator: "\n"), flags: flags, compared: compared)
        report.html = FidelityPage.html(sections, copyValues: copyValues)
        return report
    }

    private static func rate(_ n: Int, _ of: Int) -> Double { of == 0 ? 0 : Double(n) / Double(of) }
    private static func percent(_ x: Double) -> String { "\(Int((x * 100).rounded()))%" }

    /// A range the regenerated values pass.
    private static func outside(_ a: PropertyObservation, _ r: PropertyObservation) -> String? {
        if let al = a.minInt, let ah = a.maxInt, let rl = r.minInt, let rh = r.maxInt, rl < al || rh > ah {
            return "made \(rl)…\(rh) for \(al)…\(ah) seen"
        }
        if let al = a.minDouble, let ah = a.maxDouble, let rl = r.minDouble, let rh = r.maxDouble, rl < al || rh > ah {
            return "made \(EdmValue.double(rl).text)…\(EdmValue.double(rh).text) for \(EdmValue.double(al).text)…\(EdmValue.double(ah).text) seen"
        }
        if let al = a.minTicks, let ah = a.maxTicks, let rl = r.minTicks, let rh = r.maxTicks, rl < al || rh > ah {
            return "made \(date(rl))…\(date(rh)) for \(date(al))…\(date(ah)) seen"
        }
        return nil
    }

    private static func date(_ ticks: Int64) -> String { EdmDateTime(ticks: ticks).shortISO8601 }

    private static func range(_ p: PropertyObservation?) -> String {
        guard let p else { return "" }
        if let l = p.minInt, let h = p.maxInt { return "\(l)…\(h)" }
        if let l = p.minDouble, let h = p.maxDouble { return "\(EdmValue.double(l).text)…\(EdmValue.double(h).text)" }
        if let l = p.minTicks, let h = p.maxTicks { return "\(date(l))…\(date(h))" }
        return ""
    }

    private static func row(
        _ name: String, _ a: PropertyObservation?, _ r: PropertyObservation?, _ account: PartitionObservation, _ again: PartitionObservation,
        _ marks: [String], copyValues: Bool, note: String = ""
    ) -> String {
        func both(_ f: (PropertyObservation, PartitionObservation) -> String) -> String {
            "\(a.map { f($0, account) } ?? "–") / \(r.map { f($0, again) } ?? "–")"
        }
        let cells = [
            "`\(MarkupEscape.text(Printable.escaped(name)).replacingOccurrences(of: "|", with: "\\|"))`",
            both { p, _ in p.type.rawValue },
            both { p, o in percent(rate(p.present, o.count)) },
            both { p, _ in p.distinctCount.map(String.init) ?? "many" },
            both { p, o in p.present == o.count && p.allDistinct == true ? "yes" : "no" },
            // A column of a type with no range (text, GUIDs) has none to show on either side.
            range(a).isEmpty && range(r).isEmpty ? "—" : "\(copyValues ? range(a) : (a == nil ? "" : "(not shown)")) / \(range(r))",
            marks.isEmpty ? note : "✗ " + (marks + (note.isEmpty ? [] : [note])).joined(separator: "; "),
        ]
        return "| " + cells.joined(separator: " | ") + " |"
    }
}
