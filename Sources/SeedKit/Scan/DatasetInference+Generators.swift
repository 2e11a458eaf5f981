import AzureStorage
import Foundation

/// The generator a property's statistics call for.
extension Inference {
    // MARK: - generators

    mutating func generator(_ name: String, _ p: PropertyObservation, _ o: PartitionObservation, _ entities: [TableEntity], _ kind: inout KindDraft)
        -> String
    {
        let presence = p.present < o.count ? ", presence: \(Self.fraction(Double(p.present) / Double(o.count)))" : ""
        if presence.isEmpty == false { summary.append("\(kind.name).\(name) is on \(p.present) of \(o.count) entities: presence") }
        let type = p.type
        // A column Azure holds in several EDM types is generated in its usual one: say so.
        if p.typeCounts.count > 1 {
            let others = p.typeCounts.filter { $0.key != type }.sorted { $0.key.rawValue < $1.key.rawValue }
            summary.append(
                "\(kind.name).\(name) is \(type.rawValue) but holds \(others.map { "\($0.key.rawValue) in \($0.value)" }.joined(separator: ", ")) of \(p.present): generated as \(type.rawValue) (\(input.names(.copyValues)) copies each entity's own)"
            )
        }
        let typed = [.string, .int32, .boolean].contains(type) ? "" : ", type: \(type.rawValue)"
        kind.domains[name] = 1
        if let counts = p.byFrequency, counts.count == 1, input.copyValues || ValuePrivacy.mayCopy(counts[0].value, seenIn: counts[0].count) {
            return "{ const: \(Self.literal(counts[0].value))\(typed)\(presence) }"
        }
        if !input.copyValues {
            // Without --copy-values: picks keep only values seen often enough that identify no one,
            // ranges say magnitudes, and text of any other kind is generated in its shape.
            return privateGenerator(name, p, o, entities, &kind, typed: typed, presence: presence)
        }
        switch type {
        case .boolean:
            kind.domains[name] = Double(p.distinctCount ?? 2)
            return weightedPick(p.byFrequency ?? [], typed: typed, presence: presence, count: o.count)
        case .int32, .int64:
            if let sequence = sequence(name, p, o, &kind) { return sequence }
            if let counts = p.byFrequency, counts.count <= 20, counts.count < p.present {
                kind.domains[name] = Double(counts.count)
                return weightedPick(counts, typed: typed, presence: presence, count: o.count)
            }
            return intRange(name, p, o, &kind, (p.minInt ?? 0, p.maxInt ?? 0), presence: presence)
        case .double:
            let low = p.minDouble ?? 0
            let high = p.maxDouble ?? 0
            return doubleRange(low, high, p, presence: presence)
        case .dateTime:
            return dateGenerator(name, p, o, &kind, privately: false, presence: presence)
        case .string:
            if let counts = p.byFrequency, counts.count <= min(input.sample, 50), counts.count < p.present {
                kind.domains[name] = Double(counts.count)
                return weightedPick(counts, typed: typed, presence: presence, count: o.count)
            }
            if Self.isUnique(p, o) {
                // Unique text: every value, drawn once each, when the sample holds them all.
                var seen = Set<EdmValue>()
                let values = entities.compactMap { $0[name] }.filter { $0.type == type && seen.insert($0).inserted }
                if values.count >= o.count {
                    kind.domains[name] = Double(values.count)
                    summary.append("\(kind.name).\(name) is unique: its \(values.count) values, each once")
                    return "{ pick: [\(values.map(Self.literal).joined(separator: ", "))], unique: true }"
                }
                summary.append(
                    "\(kind.name).\(name) is unique in the account, but the sample holds \(values.count) of its \(o.count) values: raise \(input.names(.sampleSize)) to \(o.count) to keep it unique"
                )
            }
            fallthrough
        default:
            // High-cardinality values: a list sampled from at most `sample` entities.
            var seen = Set<EdmValue>()
            let values = entities.compactMap { $0[name] }.filter { $0.type == type && seen.insert($0).inserted }
            kind.domains[name] = Double(values.count)
            summary.append(
                "\(kind.name).\(name) has \(p.distinctCount.map(String.init) ?? "too many to count (over \(PropertyObservation.distinctLimit), or long)") distinct values: a list of the \(values.count) seen in \(entities.count) sampled entities"
            )
            return "{ pick: [\(values.map(Self.literal).joined(separator: ", "))]\(typed)\(presence) }"
        }
    }

    mutating func privateGenerator(
        _ name: String, _ p: PropertyObservation, _ o: PartitionObservation, _ entities: [TableEntity], _ kind: inout KindDraft,
        typed: String, presence: String
    ) -> String {
        let allowed = (p.byFrequency ?? []).filter { ValuePrivacy.mayCopy($0.value, seenIn: $0.count) }
        switch p.type {
        case .boolean:
            kind.domains[name] = 2
            return allowed.isEmpty ? "{ pick: [true, false]\(presence) }" : weightedPick(allowed, typed: typed, presence: presence, count: o.count)
        case .int32, .int64:
            if let sequence = sequence(name, p, o, &kind) { return sequence }
            if !allowed.isEmpty, allowed.count <= 20, allowed.count == p.byFrequency?.count {
                kind.domains[name] = Double(allowed.count)
                return weightedPick(allowed, typed: typed, presence: presence, count: o.count)
            }
            return intRange(name, p, o, &kind, ValuePrivacy.roundedPastRare(p), presence: presence)
        case .double:
            let (low, high) = ValuePrivacy.roundedPastRare(doublesOf: p)
            return doubleRange(low, high, p, presence: presence)
        case .dateTime:
            return dateGenerator(name, p, o, &kind, privately: true, presence: presence)
        case .string:
            let seen = p.byFrequency ?? []
            // Frequent one-word values are kept (a rare one among them is left out); a column of
            // few values that may not be copied keeps its shape as made-up labels, with the
            // observed frequencies.
            if !allowed.isEmpty, allowed.count <= 50, allowed.map(\.count).reduce(0, +) * 2 >= p.present {
                kind.domains[name] = Double(allowed.count)
                return weightedPick(allowed, typed: typed, presence: presence, count: o.count)
            }
            let sample = entities.lazy.compactMap { e -> String? in if case .string(let s)? = e[name] { return s } else { return nil } }.first ?? ""
            if !seen.isEmpty, seen.count <= 50, seen.count < p.present {
                // Made-up values of the column's kind: addresses, phone numbers and names that
                // look real (``Vocabulary``, spread over it), else numbered labels.
                let fake = Self.fakeKind(sample)
                let labels = seen.indices.map { i -> (value: EdmValue, count: Int) in
                    let spread = i * 997 % Vocabulary.nameCount
                    let text =
                        switch fake {
                        case "email": Vocabulary.email(of: Vocabulary.name(spread), domain: "example.com")
                        case "phone": Vocabulary.phone(i * 7919 % Vocabulary.phoneCount)
                        case "name": Vocabulary.name(spread)
                        default: "\(ValuePrivacy.safe(name)) \(i + 1)"
                        }
                    return (EdmValue.string(text), seen[i].count)
                }
                kind.domains[name] = Double(labels.count)
                summary.append(
                    "\(kind.name).\(name) is \(Self.shapeName(sample)) not copied: \(labels.count) made-up value\(labels.count == 1 ? "" : "s") with the observed frequencies"
                )
                return weightedPick(labels, typed: typed, presence: presence, count: o.count)
            }
            if Self.isUnique(p, o) {
                // Unique on every entity (a name, an address): numbered text, which can be a key
                // (made-up ones of its kind instead when it is not the key: ``chooseKey``).
                kind.fakeWhenNotKey[name] = Self.fakeKind(sample) ?? "shape"
                kind.domains[name] = .infinity
                summary.append("\(kind.name).\(name) is \(Self.shapeName(sample)) not copied, unique: numbered text (sequence)")
                return "{ sequence: { start: 1, step: 1 }, type: Edm.String }"
            }
            // Addresses, phone numbers and people's names: made-up ones that look real.
            if let fake = Self.fakeKind(sample) {
                kind.domains[name] = Double(fake == "phone" ? Vocabulary.phoneCount : Vocabulary.nameCount)
                summary.append(
                    "\(kind.name).\(name) is \(Self.shapeName(sample)) not copied: made-up \(fake == "email" ? "addresses" : fake == "phone" ? "phone numbers" : "names") (fake: \(fake))"
                )
                return "{ fake: \(fake)\(presence) }"
            }
            return shapedText(name, o, entities, &kind, presence: presence, why: "not copied")
        default:
            // GUIDs and binary identify their entity: one made-up value of the type.
            let made = p.type == .guid ? "00000000-0000-4000-8000-000000000001" : "AA=="
            return "{ const: \(Self.quoted(made))\(typed)\(presence) }"
        }
    }

    /// A template file's stem at most 120 bytes (a file name is at most 255, and a 255-byte
    /// property name once made scan fail writing), made unique by the caller.
    static func fileStem(_ text: String) -> String { String(text.prefix(120)) }

    static func shapeName(_ text: String) -> String {
        switch ValuePrivacy.shape(text) {
        case .email: "e-mail addresses"
        case .url: "URLs"
        case .phone: "phone numbers"
        case .freeText: "free text"
        case .token: "values seen in fewer than \(ValuePrivacy.minimumEntities) entities"
        }
    }

    /// A pick of the values seen with their frequencies as weights — `exact` when every entity
    /// holds one of them, so the regenerated partition has each exactly as often as seen.
    func weightedPick(_ counts: [(value: EdmValue, count: Int)], typed: String, presence: String, count: Int) -> String {
        let list = counts.prefix(50)
        let values = list.map { Self.literal($0.value) }.joined(separator: ", ")
        let exact = presence.isEmpty && list.map(\.count).reduce(0, +) == count && list.count > 1 ? ", exact: true" : ""
        if Set(list.map(\.count)).count == 1, exact.isEmpty { return "{ pick: [\(values)]\(typed)\(presence) }" }
        return "{ pick: [\(values)], weights: [\(list.map { String($0.count) }.joined(separator: ", "))]\(exact)\(typed)\(presence) }"
    }

    /// Whether a column is on every entity and no two hold the same value.
    static func isUnique(_ p: PropertyObservation, _ o: PartitionObservation) -> Bool {
        p.present == o.count && o.count > 1 && p.allDistinct == true
    }

    /// Integers that are exactly `start, start + step, …`, each once: a sequence, at any size.
    mutating func sequence(_ name: String, _ p: PropertyObservation, _ o: PartitionObservation, _ kind: inout KindDraft) -> String? {
        guard let (start, step) = p.progression(count: o.count),
            p.type != .int32 || (Int64(Int32.min)...Int64(Int32.max)).contains(p.maxInt ?? 0) && (Int64(Int32.min)...Int64(Int32.max)).contains(start)
        else { return nil }
        kind.domains[name] = .infinity
        // Without copied values a sequence starts at 1: its first value is one entity's.
        guard input.copyValues else {
            // From 1, every value must still fit the column's type.
            let last = 1 + Int128(step) * Int128(o.count - 1)
            guard last <= Int128(p.type == .int32 ? Int64(Int32.max) : Int64.max) else { return nil }
            summary.append("\(kind.name).\(name) is a sequence by \(step), each value once: sequence from 1 (values not copied)")
            return "{ sequence: { start: 1, step: \(step) }, type: \(p.type.rawValue) }"
        }
        summary.append("\(kind.name).\(name) is \(start) to \(p.maxInt ?? start) by \(step), each once: sequence")
        return "{ sequence: { start: \(start), step: \(step) }, type: \(p.type.rawValue) }"
    }

    /// An integer range; unique when the column is and the range holds the count.
    mutating func intRange(
        _ name: String, _ p: PropertyObservation, _ o: PartitionObservation, _ kind: inout KindDraft, _ bounds: (Int64, Int64), presence: String
    ) -> String {
        // A column of mostly Int32 may hold a few Int64s (Azure keeps each entity's own type):
        // the dataset holds it as its usual type, so the range stays inside that type.
        let limits: (Int64, Int64) = p.type == .int32 ? (Int64(Int32.min), Int64(Int32.max)) : (Int64.min, Int64.max)
        let bounds = (min(max(bounds.0, limits.0), limits.1), max(min(bounds.1, limits.1), limits.0))
        let size = Double(bounds.1) - Double(bounds.0) + 1
        kind.domains[name] = size
        let unique = Self.isUnique(p, o) && size >= Double(o.count) ? ", unique: true" : ""
        if !unique.isEmpty { summary.append("\(kind.name).\(name) is unique: drawn once each") }
        return "{ int: [\(bounds.0), \(bounds.1)], type: \(p.type.rawValue)\(unique)\(presence) }"
    }

    /// `double: [low, high)`, a range that is never empty: one value seen (or a range too
    /// narrow for `high`) gets the next double up, or down at the top of the doubles.
    func doubleRange(_ low: Double, _ high: Double, _ p: PropertyObservation, presence: String) -> String {
        var (a, b) = (low, high)
        if b <= a { b = a + 1 > a ? a + 1 : a.nextUp }
        if !b.isFinite { (a, b) = (low.nextDown, low) }
        // The generator draws a + u × (b − a): a width past a double's range is halved around
        // its middle until it is one (values as far out as ±1.8e308 come back as ±9e307).
        while !(b - a).isFinite { (a, b) = (a / 2, b / 2) }
        return "{ double: [\(Self.literal(.double(a))), \(Self.literal(.double(b)))]\(b - a >= 1 ? rounding(p) : "")\(presence) }"
    }

    /// `, round: N` when every double seen has at most N ≤ 6 decimals.
    func rounding(_ p: PropertyObservation) -> String {
        p.maxDecimals.map { ", round: \($0)" } ?? ""
    }

    /// A date column in its own window: from its first value's grid step (its day, when values
    /// are not copied) to just after its last, at its resolution; unique when the column is.
    mutating func dateGenerator(
        _ name: String, _ p: PropertyObservation, _ o: PartitionObservation, _ kind: inout KindDraft, privately: Bool, presence: String
    ) -> String {
        let resolution = max(p.dateResolution, EdmDateTime.ticksPerSecond)
        let grid = privately ? EdmDateTime.ticksPerDay : resolution
        func floor(_ t: Int64) -> Int64 { t - ((t % grid) + grid) % grid }
        // Without copied values both ends lie strictly outside what was seen, on whole days: a
        // first value at midnight is one entity's, and would be the bound itself.
        let bounds = ValuePrivacy.dateWindow(p.minTicks ?? 0, p.maxTicks ?? 0, few: p.present < ValuePrivacy.minimumEntities)
        let low = privately ? bounds.0 : floor(p.minTicks ?? 0)
        // The last value's step, ended before 10000-01-01 (a "never" of 9999-12-31T23:59:59.9999999).
        let high = privately ? bounds.1 : min(floor(p.maxTicks ?? 0) + grid, EdmDateTime.endOfRange.ticks - 1)
        let steps = Double(high - low) / Double(resolution)
        kind.domains[name] = steps
        let unique = Self.isUnique(p, o) && steps >= Double(o.count) ? ", unique: true" : ""
        let window = "{ from: \(EdmDateTime(ticks: low).shortISO8601), to: \(EdmDateTime(ticks: high).shortISO8601) }"
        return "{ date: \(window), resolution: \(Self.resolutionName(p.dateResolution))\(unique)\(presence) }"
    }

    /// Generated text of the column's shape, numbered by a helper sequence that is not stored:
    /// distinct values, none copied.
    mutating func shapedText(
        _ name: String, _ o: PartitionObservation, _ entities: [TableEntity], _ kind: inout KindDraft, presence: String, why: String
    ) -> String {
        let sample = entities.lazy.compactMap { e -> String? in if case .string(let s)? = e[name] { return s } else { return nil } }.first ?? ""
        let helper = uniqueName(ValuePrivacy.safe(name) + "Number", in: o)
        var stem = Self.fileStem("\(kind.name)-" + ValuePrivacy.safe(name))
        while templates.contains(where: { $0.name == stem + ".mustache" }) { stem += "_" }
        templates.append((stem + ".mustache", ValuePrivacy.template(for: sample, property: name, helper: helper)))
        kind.fields.append((helper, "{ sequence: { start: 1, step: 1 } }"))
        kind.omit.append(helper)
        kind.domains[name] = .infinity
        summary.append("\(kind.name).\(name) is \(Self.shapeName(sample)) \(why): generated text (template \(stem).mustache)")
        return "{ template: \(Self.path(stem + ".mustache"))\(presence) }"
    }

    /// The `fake:` vocabulary a value's shape calls for: an address, a phone number, or a
    /// person's name (two or three capitalised words of letters); nil for other text.
    static func fakeKind(_ sample: String) -> String? {
        switch ValuePrivacy.shape(sample) {
        case .email: return "email"
        case .phone: return "phone"
        case .freeText:
            let words = sample.split(separator: " ")
            let isName =
                (2...3).contains(words.count)
                && words.allSatisfy { word in
                    word.unicodeScalars.first.map { $0.properties.isUppercase } == true
                        && word.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || $0 == "-" || $0 == "'" }
                }
            return isName ? "name" : nil
        default: return nil
        }
    }
}
