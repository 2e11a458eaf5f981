import AzureStorage
import Foundation

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
                case .date(let step, let window):
                    componentOfField[name] = components.count
                    components.append((name, UInt128(dateDomain(step: step, window: window).count)))
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
            if field.unique, let op = try uniqueOp(field, keyComponent: key, components: components.count) {
                ops.append(op)
                continue
            }
            switch field.generator {
            case .const(let v):
                ops.append(.value(v))
            case .pick(let values):
                ops.append(.pick(key == nil ? values : distinct(values), key: key))
            case .weightedPick(let values, let weights) where field.exact:
                var total: UInt64 = 0
                let cumulative = weights.map {
                    total += $0
                    return total
                }
                let seed = SeedRandom.stream(seed: context.seed, name: "\(spec.table)/\(spec.name)/\(field.name)#exact")
                ops.append(.dealtPick(values, cumulative: cumulative, seed: seed))
            case .weightedPick(let values, let weights):
                var total: UInt64 = 0
                ops.append(
                    .weightedPick(
                        values,
                        cumulative: weights.map {
                            total += $0
                            return total
                        }))
            case .date(let step, let window):
                let domain = try nonEmptyDateDomain(field, step: step, window: window)
                ops.append(.date(first: domain.first, step: step, count: domain.count, key: key))
            case .int(let min, let max, let type):
                ops.append(.int(min: min, count: UInt128(Int128(max) - Int128(min) + 1), type: type, key: key))
            case .double(let min, let max, let round):
                ops.append(.double(min: min, width: max - min, scale: round.map { pow(10, Double($0)) }))
            case .sequence(let start, let step, let type):
                // Every value the count makes must fit the type (a dataset's author, or a flag's
                // count, could run an Int32 sequence past 2,147,483,647).
                let count = Int128(spec.rows?.count ?? context.counts[spec.name] ?? spec.count ?? 0)
                let last = Int128(start) + Int128(step) * max(count - 1, 0)
                let bounds: ClosedRange<Int128> =
                    type == .int32
                    ? Int128(Int32.min)...Int128(Int32.max)
                    : type == .string ? Int128(Int64.min)...Int128(Int64.max) : Int128(Int64.min)...Int128(Int64.max)
                // A count past what one run makes is refused as such when the identities are drawn.
                guard bounds.contains(last) || count > Int128(KindEngine.maxEntities) else {
                    throw GenerationError(
                        usage: context.counts[spec.name] != nil,
                        "field '\(field.name)' of kind '\(spec.name)': its sequence reaches \(last) at \(count) entities, past \(type == .int32 ? "Edm.Int32" : "Edm.Int64"); start lower, or make it \(type == .int32 ? "Edm.Int64" : "fewer entities") (\(context.dataset.file):\(field.line))"
                    )
                }
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
            case .dateAfter(let ref, let property, let within, let step):
                let target = refTargets[ref]!
                let index = target.propertyIndex(property)!
                // Checked on every referenced entity now, before anything is written.
                if let made = target.materialized,
                    made.contains(where: { if case .dateTime = target.property(index, of: $0) { false } else { true } })
                {
                    throw GenerationError(
                        "\(context.dataset.file):\(field.line): field '\(field.name)' of kind '\(spec.name)': date.after names '\(property)' of kind '\(target.spec.name)', which is no date there; name an Edm.DateTime property"
                    )
                }
                ops.append(.dateAfter(refSlot: slot(ref), property: index, step: step, steps: UInt64(within / step)))
            case .template(let template):
                ops.append(.template(template, sources: sources(template, refTargets)))
            case .fake(.name): ops.append(.fakeName)
            case .fake(.phone): ops.append(.fakePhone)
            case .fake(.email(nil, let domain)): ops.append(.fakeEmail(domain: domain))
            case .fake(.email(let of?, let domain)): ops.append(.emailOf(slot: slot(of), domain: domain))
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

    /// A date field's grid, refused when its window holds no date at its resolution.
    private func nonEmptyDateDomain(_ field: FieldDefinition, step: Int64, window: ResolvedWindow?) throws(GenerationError) -> (
        first: Int64, count: UInt64
    ) {
        let domain = dateDomain(step: step, window: window)
        if domain.count == 0 {
            let w = window ?? context.window
            let widen = window == nil ? "widen \(Setting.windowStart)/\(Setting.windowEnd)" : "widen the field's from/to"
            // The dataset's window moves with flags (a usage error); a field's own is the dataset's.
            throw GenerationError(
                usage: window == nil,
                "\(spec.table)/\(spec.name).\(field.name): the window \(w.from.shortISO8601) to \(w.to.shortISO8601) holds no date at this field's resolution; \(widen)"
            )
        }
        return domain
    }

    /// A `unique:` field's op: its values drawn without replacement by the entity's generation
    /// index; nil when the generator is unique already (a sequence, the one key component).
    private func uniqueOp(_ field: FieldDefinition, keyComponent: Int?, components: Int) throws(GenerationError) -> FieldOp? {
        let what = "\(context.dataset.file):\(field.line): field '\(field.name)' of kind '\(spec.name)'"
        if case .sequence = field.generator { return nil }
        if keyComponent != nil {
            // The kind's only key component: distinct keys are distinct values.
            guard components == 1 else {
                throw GenerationError("\(what) is unique and one of several key fields; make it the only key field, or drop unique")
            }
            return nil
        }
        let domain: UniqueDomain
        let size: UInt64
        switch field.generator {
        case .pick(let values):
            let list = distinct(values)
            domain = .values(list)
            size = UInt64(list.count)
        case .int(let min, let max, let type):
            domain = .ints(min: min, type: type)
            size = UInt64(clamping: Int128(max) - Int128(min) + 1)
        case .date(let step, let window):
            let grid = try nonEmptyDateDomain(field, step: step, window: window)
            domain = .dates(first: grid.first, step: step)
            size = grid.count
        case .fake(.name):
            domain = .names
            size = UInt64(Vocabulary.nameCount)
        case .fake(.email(nil, let d)):
            domain = .emails(domain: d)
            size = UInt64(Vocabulary.nameCount)
        case .fake(.phone):
            domain = .phones
            size = UInt64(Vocabulary.phoneCount)
        case .fake(.email(let of?, _)):
            throw GenerationError("\(what): an address made of '\(of)' is as unique as '\(of)': put unique on that field")
        default:
            throw GenerationError("\(what): unique applies to pick (without weights), int, date, fake and sequence fields")
        }
        let count = spec.rows?.count ?? context.counts[spec.name] ?? spec.count ?? 0
        guard UInt64(count) <= size else {
            // A usage error when a flag (`--count`) asked for the count, else the dataset's own.
            throw GenerationError(
                usage: context.counts[spec.name] != nil,
                "\(what) is unique, but its generator holds \(size) distinct values for \(count) entities; widen it or ask for fewer")
        }
        let seed = SeedRandom.stream(seed: context.seed, name: "\(spec.table)/\(spec.name)/\(field.name)#unique")
        return .unique(domain, IndexPermutation(size: size, seed: seed))
    }

    /// The first date on the resolution grid at or after the window start, and how many
    /// grid dates fall before the window end.
    private func dateDomain(step: Int64, window: ResolvedWindow?) -> (first: Int64, count: UInt64) {
        let from = (window ?? context.window).from.ticks
        let to = (window ?? context.window).to.ticks
        let rem = from % step
        let first = rem == 0 ? from : from + (step - (rem + step) % step)
        guard first < to else { return (first, 0) }
        return (first, UInt64((to - 1 - first) / step + 1))
    }
}
