import AzureStorage
import Foundation

/// The generator a property's statistics call for.
extension Inference {
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
}
