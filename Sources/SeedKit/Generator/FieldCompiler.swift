import AzureStorage

/// Turns a kind's field definitions into ``FieldOp``s and, for a generated kind, its key space.
struct FieldCompiler {
    let spec: KindSpec
    let slotNames: [String]
    let context: GenerationContext

    func compile() throws(GenerationError) -> (ops: [FieldOp], keySpace: KeySpace?) {
        let keyed =
            spec.rows == nil
            && !spec.key.contains { name in
                if case .sequence = spec.field(named: name)?.generator { return true }
                return false
            }
        // Key components in key order; a ref contributes one component however many key
        // fields come from it.
        var components: [(name: String, size: UInt128)] = []
        var componentOfField: [String: Int] = [:]
        var refKeyProperties: [String: [String]] = [:]
        if keyed {
            for name in spec.key {
                guard let field = spec.field(named: name) else { continue }
                switch field.generator {
                case .pick(let values):
                    componentOfField[name] = components.count
                    components.append((name, UInt128(distinct(values).count)))
                case .date(let step):
                    componentOfField[name] = components.count
                    components.append((name, UInt128(dateDomain(step: step).count)))
                case .int(let min, let max, _):
                    componentOfField[name] = components.count
                    components.append((name, UInt128(Int128(max) - Int128(min) + 1)))
                case .from(let ref, let property):
                    if refKeyProperties[ref] == nil {
                        componentOfField[ref] = components.count
                        components.append((ref, 0))  // size filled in below, from the groups
                    }
                    refKeyProperties[ref, default: []].append(property)
                default: break
                }
            }
        }
        var ops: [FieldOp] = []
        var refTargets: [String: KindEngine] = [:]
        for field in spec.fields {
            let key = componentOfField[field.name]
            switch field.generator {
            case .const(let v):
                ops.append(.value(v))
            case .pick(let values):
                ops.append(.pick(key == nil ? values : distinct(values), key: key))
            case .weightedPick(let values, let weights):
                var total: UInt64 = 0
                ops.append(
                    .weightedPick(
                        values,
                        cumulative: weights.map {
                            total += $0
                            return total
                        }))
            case .date(let step):
                let domain = dateDomain(step: step)
                if domain.count == 0 {
                    throw GenerationError(
                        usage: true,
                        "\(spec.table)/\(spec.name).\(field.name): the window \(context.window.from.shortISO8601) to \(context.window.to.shortISO8601) holds no date at this field's resolution; widen \(Setting.windowStart)/\(Setting.windowEnd)"
                    )
                }
                ops.append(.date(first: domain.first, step: step, count: domain.count, key: key))
            case .int(let min, let max, let type):
                ops.append(.int(min: min, count: UInt128(Int128(max) - Int128(min) + 1), type: type, key: key))
            case .double(let min, let max):
                ops.append(.double(min: min, width: max - min))
            case .sequence(let start, let step, let type):
                ops.append(.sequence(start: start, step: step, type: type))
            case .ref(let targetName):
                guard let target = context.engines[targetName], let entities = target.materialized else {
                    throw GenerationError("internal: kind '\(targetName)' was not made before '\(spec.name)'")
                }
                refTargets[field.name] = target
                var groups: [[Int]] = []
                if let key, let properties = refKeyProperties[field.name] {
                    let indices = properties.map { target.propertyIndex($0)! }
                    var groupOf: [[EdmValue]: Int] = [:]
                    for (i, entity) in entities.enumerated() {
                        let tuple = indices.map { target.property($0, of: entity) }
                        if let g = groupOf[tuple] {
                            groups[g].append(i)
                        } else {
                            groupOf[tuple] = groups.count
                            groups.append([i])
                        }
                    }
                    components[key].size = UInt128(groups.count)
                }
                if entities.isEmpty { throw GenerationError("kind '\(spec.name)' references kind '\(targetName)', which has no entities") }
                ops.append(.ref(target: target, key: key, groups: groups))
            case .from(let ref, let property):
                let target = refTargets[ref]!
                ops.append(.from(refSlot: slot(ref), property: target.propertyIndex(property)!))
            case .template(let template):
                ops.append(.template(template, sources: sources(template, refTargets)))
            case .blobURL(let containerName, let name):
                let container = context.containers.first { $0.name == containerName }!
                let prefix = context.blobEndpoint + "/" + PercentEncoding.path(containerName) + "/"
                ops.append(
                    .blobURL(
                        prefix: prefix, name: name, sources: sources(name, refTargets),
                        files: Set(container.blobs.map { ExactString($0.name) }), container: containerName))
            }
        }
        return (ops, keyed ? KeySpace(components: components) : nil)
    }

    private func slot(_ name: String) -> Int { slotNames.firstIndex(of: name)! }

    private func sources(_ template: Template, _ refs: [String: KindEngine]) -> [VariableSource] {
        template.variables.map { variable in
            let parts = variable.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 2, let target = refs[parts[0]] {
                return .refProperty(ref: parts[0], property: parts[1], slot: slot(parts[0]), propertyIndex: target.propertyIndex(parts[1])!)
            }
            return .slot(name: variable, index: slot(variable))
        }
    }

    private func distinct(_ values: [EdmValue]) -> [EdmValue] {
        var seen: Set<EdmValue> = []
        return values.filter { seen.insert($0).inserted }
    }

    /// The first date on the resolution grid at or after the window start, and how many
    /// grid dates fall before the window end.
    private func dateDomain(step: Int64) -> (first: Int64, count: UInt64) {
        let from = context.window.from.ticks
        let to = context.window.to.ticks
        let rem = from % step
        let first = rem == 0 ? from : from + (step - (rem + step) % step)
        guard first < to else { return (first, 0) }
        return (first, UInt64((to - 1 - first) / step + 1))
    }
}
