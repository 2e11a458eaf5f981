import AzureStorage
import Foundation

/// The fidelity report in pictures (`fidelity.html`, beside `fidelity.md`): per kind and
/// property, the account and the regenerated data side by side — histograms of numbers and
/// dates, the most frequent values of categories, presence and distinct counts — as one
/// self-contained page of inline SVG (no script, no network: a Content-Security-Policy that
/// allows nothing else). Without `--copy-values` it shows shapes, not the account's values:
/// histograms in bins with no bound of the account written, categories by rank (1st, 2nd, …)
/// with their shares, never their text.
public enum FidelityPage {
    static let accountColour = "#2f6db5"
    static let regeneratedColour = "#e0782f"

    struct Section {
        var kind: ScannedKind
        var again: PartitionObservation
        /// Flags per property name, as the Markdown report raised them.
        var marks: [String: [String]]
    }

    static func html(_ sections: [Section], copyValues: Bool) -> String {
        var out = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
            <title>Fidelity of the scanned dataset</title>
            <style>
            body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
            h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ccc}
            .cards{display:flex;flex-wrap:wrap;gap:12px}
            .card{border:1px solid #ddd;border-radius:6px;padding:8px 10px;width:300px}
            .card.flagged{border-color:#c0392b;background:#fff6f5}
            .name{font-weight:600;font-family:monospace;word-break:break-all}
            .meta{color:#555;font-size:12px}.flag{color:#c0392b;font-size:12px}
            .key span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}
            </style></head><body>
            <h1>Fidelity of the scanned dataset</h1>
            <p class="key">Each card compares the account <span style="background:\(accountColour)"></span>(blue, first) with the dataset generated again at the observed counts <span style="background:\(regeneratedColour)"></span>(orange, second); bars are shares of the entities holding the property.
            \(copyValues ? "" : "Values were not copied: histograms show shapes in bins, categories their shares by rank, never a value of the account.")</p>

            """
        for section in sections {
            let account = section.kind.observation
            let shown = copyValues ? account.partition : section.kind.partition
            out +=
                "<h2>\(escape(section.kind.table)) / \(escape(Printable.escaped(shown, quotes: false))) → kind <code>\(escape(section.kind.name))</code> (\(account.count) / \(section.again.count) entities)</h2>\n<div class=\"cards\">\n"
            let names = Set(account.propertyNames + section.again.propertyNames).sorted { $0.byteOrder($1) < 0 }
            for name in names {
                out += card(
                    name, account.property(name), section.again.property(name), account, section.again, marks: section.marks[name] ?? [],
                    copyValues: copyValues)
            }
            out += "</div>\n"
        }
        return out + "</body></html>\n"
    }

    static func card(
        _ name: String, _ a: PropertyObservation?, _ r: PropertyObservation?, _ account: PartitionObservation, _ again: PartitionObservation,
        marks: [String], copyValues: Bool
    ) -> String {
        func percent(_ p: PropertyObservation?, _ o: PartitionObservation) -> String {
            guard let p, o.count > 0 else { return "–" }
            return "\(Int((Double(p.present) / Double(o.count) * 100).rounded()))%"
        }
        func distinct(_ p: PropertyObservation?) -> String {
            p.map { $0.distinctCount.map(String.init) ?? "many" } ?? "–"
        }
        var out =
            "<div class=\"card\(marks.isEmpty ? "" : " flagged")\"><div class=\"name\">\(escape(Printable.escaped(name, quotes: false)))</div>\n"
        out +=
            "<div class=\"meta\">\(escape(a?.type.rawValue ?? "–")) / \(escape(r?.type.rawValue ?? "–")) · present \(percent(a, account)) / \(percent(r, again)) · distinct \(distinct(a)) / \(distinct(r))</div>\n"
        out += chart(a, r, copyValues: copyValues)
        for mark in marks { out += "<div class=\"flag\">✗ \(escape(mark))</div>\n" }
        return out + "</div>\n"
    }

    /// A histogram when both sides hold numbers or dates, else the most frequent values, else
    /// presence bars.
    static func chart(_ a: PropertyObservation?, _ r: PropertyObservation?, copyValues: Bool) -> String {
        let (pa, pr) = (a?.points.map(\.value) ?? [], r?.points.map(\.value) ?? [])
        let isDate = (a ?? r)?.type == .dateTime
        let isInteger = [.int32, .int64].contains((a ?? r)?.type)
        if !pa.isEmpty || !pr.isEmpty, let low = (pa + pr).min(), let high = (pa + pr).max() {
            let bins = 16
            func counts(_ values: [Double]) -> [Double] {
                var c = [Double](repeating: 0, count: bins)
                for v in values {
                    // Halves first: the width of ±1e308 is past a double's range.
                    let position = high > low ? (v / 2 - low / 2) / (high / 2 - low / 2) * Double(bins) : 0
                    let i = position.isFinite ? min(bins - 1, max(0, Int(position))) : 0
                    c[i] += 1
                }
                return values.isEmpty ? c : c.map { $0 / Double(values.count) }
            }
            // The account's bounds are written only when its values may be: otherwise the
            // dataset's own (what it generated), and only when they contain the account's.
            let regenerated = (pr.min(), pr.max())
            let labelled =
                copyValues
                ? (low, high)
                : (regenerated.0.map { $0 <= low } == true && regenerated.1.map { $0 >= high } == true ? (low, high) : nil)
            return bars(
                counts(pa), counts(pr), labels: nil, axis: labelled.map { (label($0.0, isDate, isInteger), label($0.1, isDate, isInteger)) })
        }
        let ranked = { (p: PropertyObservation?) -> [(value: EdmValue, count: Int)] in Array((p?.byFrequency ?? []).prefix(8)) }
        let (ta, tr) = (ranked(a), ranked(r))
        if !ta.isEmpty || !tr.isEmpty {
            let share = { (list: [(value: EdmValue, count: Int)], p: PropertyObservation?) in
                list.map { Double($0.count) / Double(max(p?.present ?? 1, 1)) }
            }
            if copyValues {
                // The account's top values, and how often the dataset made each.
                let regenerated = Dictionary(tr.map { ($0.value, $0.count) }, uniquingKeysWith: +)
                let values = ta.map(\.value)
                let made = values.map { Double(regenerated[$0] ?? r?.seen($0) ?? 0) / Double(max(r?.present ?? 1, 1)) }
                return rows(share(ta, a), made, labels: values.map { $0.text.count > 16 ? String($0.text.prefix(15)) + "…" : $0.text })
            }
            // Shapes only: the k-th most frequent value's share on each side.
            let n = max(ta.count, tr.count)
            let ordinal = (1...max(n, 1)).map { $0 == 1 ? "1st" : $0 == 2 ? "2nd" : $0 == 3 ? "3rd" : "\($0)th" }
            return rows(pad(share(ta, a), n), pad(share(tr, r), n), labels: Array(ordinal.prefix(n)))
        }
        return ""
    }

    static func pad(_ values: [Double], _ n: Int) -> [Double] { values + Array(repeating: 0, count: max(0, n - values.count)) }

    static func label(_ value: Double, _ isDate: Bool, _ isInteger: Bool) -> String {
        if isDate { return String(EdmDateTime(ticks: Int64(value)).shortISO8601.prefix(10)) }
        if isInteger, let n = Int64(exactly: value.rounded()) { return String(n) }
        return EdmValue.double((value * 1000).rounded() / 1000).text
    }

    /// Paired bars (account, regenerated) per bin or value, heights as shares of the tallest.
    static func bars(_ account: [Double], _ regenerated: [Double], labels: [String]?, axis: (String, String)?) -> String {
        let n = max(account.count, regenerated.count, 1)
        let width = 280.0
        let height = 90.0
        let top = max(account.max() ?? 0, regenerated.max() ?? 0, 1e-9)
        let slot = width / Double(n)
        let bar = max(1, slot / 2 - 1)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height) + 30)\" role=\"img\">"
        svg += "<line x1=\"0\" y1=\"\(height)\" x2=\"\(width)\" y2=\"\(height)\" stroke=\"#999\"/>"
        for i in 0..<n {
            let x = Double(i) * slot
            for (j, series) in [account, regenerated].enumerated() {
                let v = i < series.count ? series[i] : 0
                let h = (v / top * (height - 4)).rounded()
                svg +=
                    "<rect x=\"\(format(x + Double(j) * (bar + 1)))\" y=\"\(format(height - h))\" width=\"\(format(bar))\" height=\"\(format(h))\" fill=\"\(j == 0 ? accountColour : regeneratedColour)\"/>"
            }
            if let labels, i < labels.count {
                svg +=
                    "<text x=\"\(format(x + slot / 2))\" y=\"\(format(height + 12))\" font-size=\"9\" text-anchor=\"middle\">\(escape(Printable.escaped(labels[i], quotes: false)))</text>"
            }
        }
        if let (low, high) = axis {
            svg += "<text x=\"0\" y=\"\(format(height + 24))\" font-size=\"10\">\(escape(low))</text>"
            svg += "<text x=\"\(width)\" y=\"\(format(height + 24))\" font-size=\"10\" text-anchor=\"end\">\(escape(high))</text>"
        }
        return svg + "</svg>\n"
    }

    /// A row per value (its label, then the account's share and the dataset's as two bars),
    /// scaled to the largest share.
    static func rows(_ account: [Double], _ regenerated: [Double], labels: [String]) -> String {
        let n = max(account.count, regenerated.count, labels.count, 1)
        let top = max(account.max() ?? 0, regenerated.max() ?? 0, 1e-9)
        let (left, width, line) = (104.0, 176.0, 14.0)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(left + width))\" height=\"\(Int(Double(n) * line) + 4)\" role=\"img\">"
        for i in 0..<n {
            let y = Double(i) * line
            if i < labels.count {
                svg +=
                    "<text x=\"\(format(left - 4))\" y=\"\(format(y + 10))\" font-size=\"10\" text-anchor=\"end\">\(escape(Printable.escaped(labels[i], quotes: false)))</text>"
            }
            for (j, series) in [account, regenerated].enumerated() {
                let v = i < series.count ? series[i] : 0
                svg +=
                    "<rect x=\"\(format(left))\" y=\"\(format(y + 1 + Double(j) * 6))\" width=\"\(format(max(v / top * width, v > 0 ? 1 : 0)))\" height=\"5\" fill=\"\(j == 0 ? accountColour : regeneratedColour)\"/>"
            }
        }
        return svg + "</svg>\n"
    }

    static func format(_ x: Double) -> String { String(format: "%.1f", x) }

    /// `text` with the five characters HTML gives meaning escaped.
    public static func escape(_ text: String) -> String { MarkupEscape.text(text) }
}
