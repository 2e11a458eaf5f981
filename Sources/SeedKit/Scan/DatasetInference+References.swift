import AzureStorage
import Foundation

/// Which properties hold another partition's keys (`ref` + `from`).
extension Inference {
    // MARK: - references

    /// Properties whose every value is a RowKey, or a unique property's value, of another
    /// partition. Edges that would close a cycle are left out (kinds are made in dependency order).
    mutating func findReferences() {
        var edges: [Int: Set<Int>] = [:]
        func reaches(_ from: Int, _ to: Int) -> Bool {
            var stack = [from]
            var seen = Set<Int>()
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
                // The simplest explanation first: numbers that are exactly start, start + step, …
                // each once are a sequence of this kind's own, whatever other kind holds them too
                // (a partition's gap-free Seq 1…n is not a reference to another's Seq).
                if [.int32, .int64].contains(p.type), p.progression(count: source.count) != nil { continue }
                var found: (Int, String)?
                for b in kinds.indices where b != a && !reaches(b, a) {
                    let target = kinds[b].observation
                    if p.type == .string, let keys = target.rowKeys,
                        values.keys.allSatisfy({ if case .string(let s) = $0 { keys.contains(ExactString(s)) } else { false } })
                    {
                        found = (b, "RowKey")
                        break
                    }
                    for q in target.propertyNames {
                        guard let t = target.property(q), t.type == p.type, t.present == target.count, t.distinctCount == target.count,
                            [.string, .int32, .int64, .guid].contains(t.type), let targetValues = t.distinct
                        else { continue }
                        // Numbers are another kind's keys only when they repeat here (many
                        // entities name one); numbers unique on both sides merely share a range.
                        if [.int32, .int64].contains(p.type), Self.isUnique(p, source) { continue }
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

    /// A property of an entity as a reference reads it: its RowKey too (no property of the
    /// entity's own map).
    static func value(_ entity: TableEntity, _ property: String) -> EdmValue? {
        property == "RowKey" ? .string(entity.rowKey) : entity[property]
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
}
