import AzureStorage
import Foundation

/// The natural key proposed for a kind.
extension Inference {
    // MARK: - keys

    /// A natural key from properties unique over every entity seen, else every keyable one.
    mutating func chooseKey(_ kind: inout KindDraft) {
        let o = kind.observation
        func unique(_ name: String) -> Bool {
            guard let p = o.property(name) else { return false }
            return Self.isUnique(p, o)
        }
        if kind.rows {
            let rows = o.entities ?? []
            // A key column is in every row, in the column's own type (another type is left off a row).
            let whole = { (c: String) in rows.allSatisfy { $0[c]?.type == o.property(c)?.type } }
            let candidates = kind.columns.filter { c in !kind.helperColumns.contains { $0.name == c } && unique(c) && whole(c) }
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
                let stored = kind.columns.filter { c in whole(c) && !kind.helperColumns.contains { $0.name == c } }
                // Compared as the dataset will hold them: one EDM type per column (`types:`), so by
                // text — Int32 5 and Int64 5 are one value there.
                let distinct =
                    Set(rows.map { e in stored.map { name in e[name].map { Array($0.text.utf8) } ?? [] } }).count == rows.count
                if !stored.isEmpty, distinct {
                    kind.key = stored
                    kind.keyReason = "no property is unique on its own; the key is every column present in all rows"
                } else {
                    // Rows that differ only in their RowKeys: a numbered column tells them apart.
                    let number = uniqueName("Number", in: o)
                    var values: [String: String] = [:]
                    for (i, e) in rows.enumerated() { values[e.rowKey] = String(i + 1) }
                    kind.helperColumns.append((number, values))
                    kind.columns.append(number)
                    kind.key = [number]
                    kind.keyReason = "no columns tell the \(rows.count) rows apart; '\(number)' (added) numbers them"
                    summary.append("\(kind.name): \(kind.keyReason)")
                }
            }
            return
        }
        let keyable = kind.fields.filter { field in
            !field.yaml.contains("presence:")
                && (field.yaml.hasPrefix("{ sequence") || field.yaml.hasPrefix("{ int") || field.yaml.hasPrefix("{ date")
                    || field.yaml.hasPrefix("{ pick") || field.yaml.hasPrefix("{ from") || field.yaml.hasPrefix("{ const"))
                && !kind.omit.contains(field.name)
        }
        // A key for what the data means: a sequence of numbers first, then a natural id (values
        // copied, each once), numbers, references, timestamps; numbered text (a stand-in for
        // values not copied) last.
        let rank: (String) -> Int = { yaml in
            if yaml.hasPrefix("{ sequence") { return yaml.contains("Edm.String") ? 5 : 0 }
            return yaml.hasPrefix("{ pick") ? 1 : yaml.hasPrefix("{ int") ? 2 : yaml.hasPrefix("{ from") ? 3 : yaml.hasPrefix("{ date") ? 4 : 6
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
            // One entity needs no more than one field to key it (all of them could make a
            // key space past what the generator counts).
            kind.key = chosen.isEmpty ? Array(ranked.prefix(1).map(\.name)) : chosen
            kind.keyReason =
                space >= needed
                ? (kind.key.count == 1
                    ? "no property is unique; '\(kind.key[0])' as generated can tell \(o.count) entities apart"
                    : "no property alone can tell \(o.count) entities apart; these together can")
                : "no properties can tell \(o.count) entities apart with the values sampled; raise \(input.names(.sampleSize))"
            if space < needed || kind.key.isEmpty {
                // Nothing the dataset holds tells the entities apart (values not copied, or not
                // all sampled): a numbered property does, so the dataset still generates at the
                // observed count (it is one property more than scanned).
                let number = uniqueName("Number", in: o)
                kind.fields.insert((number, "{ sequence: { start: 1, step: 1 } }"), at: 0)
                kind.key = [number]
                kind.keyReason =
                    input.copyValues
                    ? "no property can tell \(o.count) entities apart with the values sampled; '\(number)' (added) numbers them (or raise \(input.names(.sampleSize)))"
                    : "no property can tell \(o.count) entities apart without copying values; '\(number)' (added) numbers them"
                summary.append("\(kind.name): \(kind.keyReason)")
            }
        }
        // Unique addresses, phone numbers and names that do not key: made-up ones that look
        // real, drawn once each, when the vocabulary holds the count; other unique text (a URL,
        // an id) generated text of its shape, numbered.
        for i in kind.fields.indices.reversed() {
            let name = kind.fields[i].name
            guard let fake = kind.fakeWhenNotKey[name], !kind.key.contains(name) else { continue }
            if fake == "shape" {
                summary.removeAll { $0.hasPrefix("\(kind.name).\(name) is ") && $0.hasSuffix("numbered text (sequence)") }
                let count = kind.fields.count
                let yaml = shapedText(name, o, o.sample, &kind, presence: "", why: "not copied, unique")
                // The helper it numbers by comes before the field (fields are made in order).
                let helper = kind.fields.remove(at: count)
                kind.fields[i].yaml = yaml
                kind.fields.insert(helper, at: i)
                continue
            }
            guard o.count <= (fake == "phone" ? Vocabulary.phoneCount : Vocabulary.nameCount) else { continue }
            kind.fields[i].yaml = "{ fake: \(fake), unique: true }"
            // One note per field: this one replaces the numbered text it was first given.
            summary.removeAll { $0.hasPrefix("\(kind.name).\(name) is ") && $0.hasSuffix("numbered text (sequence)") }
            summary.append(
                "\(kind.name).\(name) is unique and does not key: made-up \(fake == "email" ? "addresses" : fake == "phone" ? "phone numbers" : "names"), each once (fake: \(fake), unique)"
            )
        }
        // Key fields draw from their whole domain, uniformly: no weights.
        for i in kind.fields.indices where kind.key.contains(kind.fields[i].name) && kind.fields[i].yaml.contains(", weights: [") {
            let yaml = kind.fields[i].yaml
            if let start = yaml.range(of: ", weights: ["), let end = yaml.range(of: "]", range: start.upperBound..<yaml.endIndex) {
                kind.fields[i].yaml = String(yaml[..<start.lowerBound] + yaml[end.upperBound...]).replacingOccurrences(of: ", exact: true", with: "")
            }
        }
    }
}
