import AzureStorage

/// Makes entities of one kind. Not shared between threads: it keeps a cache of rendered
/// templates, since most templates read few fields and repeat their output.
struct EntityBuilder {
    let engine: KindEngine
    private var values: [EdmValue]
    private var refs: [Int]
    /// Rendered text by op index, keyed by the values the template reads.
    private var templateCaches: [Int: [[TemplateInput]: String]] = [:]
    private static let cacheLimit = 65_536
    private var digits: [UInt128] = []
    private var hashInput: [UInt8] = []
    private var text: [UInt8] = []
    /// Slots this entity does not have: `~` row cells and fields whose `presence` draw failed.
    private var absent: [Bool]
    /// Per slot, which entry of its list the entity took (picks, constants, refs and what is
    /// copied from a ref): what numbers a template's output in ``numbered``.
    private var choices: [Int]
    /// Rendered text by op index, in a table numbered by the choices the template reads, for
    /// templates reading only list entries (at most ``cacheLimit`` combinations): no hashing.
    private var numbered: [NumberedCache?]
    /// The kind's stored names, in an array of this builder's own: every entity it makes
    /// shares it, and builders on other threads never touch its reference count.
    private let storedNames: [String]

    init(engine: KindEngine) {
        self.engine = engine
        storedNames = engine.storedNames.map { String(decoding: Array($0.utf8), as: UTF8.self) }
        values = engine.spec.rows?.first?.values.map(\.1) ?? []
        values += Array(repeating: .boolean(false), count: engine.ops.count)
        refs = Array(repeating: 0, count: values.count)
        absent = Array(repeating: false, count: values.count)
        choices = Array(repeating: 0, count: values.count)
        numbered = engine.ops.map { op in
            guard case .template(_, let sources) = op, engine.spec.rows == nil else { return nil }
            return NumberedCache(sources: sources, engine: engine)
        }
    }

    /// The RowKey of key index `index` of a generated kind, straight from its digits.
    mutating func keyFromSpace(_ index: UInt128) -> RowKeyBits {
        engine.keySpace!.digits(of: index, into: &digits)
        hashInput.removeAll(keepingCapacity: true)
        hashInput.append(contentsOf: engine.naturalKey.prefix)
        for (position, piece) in engine.keyPieces.enumerated() {
            switch piece {
            case .table(let component, let pieces): hashInput.append(contentsOf: pieces[Int(digits[component])])
            case .constant(let bytes): hashInput.append(contentsOf: bytes)
            case .computed(let slot):
                let value = keyValue(engine.ops[slot - engine.columnCount], digits)
                NaturalKey.appendPiece(field: engine.spec.key[position], value: value, to: &hashInput, text: &text)
            }
        }
        return NaturalKey.rowKey(hashInput: hashInput)
    }

    private func keyValue(_ op: FieldOp, _ digits: [UInt128]) -> EdmValue {
        switch op {
        case .value(let v): return v
        case .pick(let values, let key?): return values[Int(digits[key])]
        case .date(let first, let step, _, let key?): return .dateTime(EdmDateTime(ticks: first + Int64(digits[key]) * step))
        case .int(let min, _, let type, let key?): return intValue(Int128(min) + Int128(digits[key]), type)
        case .from(let refSlot, let property):
            guard case .ref(let target, let key?, let groups) = engine.ops[refSlot - engine.columnCount] else { break }
            return target.property(property, of: target.materialized![groups[Int(digits[key])][0]])
        default: break
        }
        preconditionFailure("not a key component")
    }

    /// The RowKey of an entity whose key needs the whole entity (rows, sequence-keyed kinds).
    mutating func keyByBuilding(identity: UInt128, ordinal: Int) throws(GenerationError) -> RowKeyBits {
        try evaluate(identity: identity, ordinal: ordinal, index: Int(identity))
        return engine.naturalKey.rowKey(engine.keySlots.map { (engine.slotNames[$0], values[$0]) })
    }

    /// The entity with identity `identity`, the `ordinal`-th in RowKey order, made `index`-th
    /// (its row, its draw: what `unique:` fields go by).
    mutating func build(identity: UInt128, ordinal: Int, index: Int, rowKey: RowKeyBits) throws(GenerationError) -> GeneratedEntity {
        try evaluate(identity: identity, ordinal: ordinal, index: index)
        var names = storedNames
        var stored = engine.storedSlots.map { values[$0] }
        if absent.contains(true) {
            let kept = engine.storedSlots.indices.filter { !absent[engine.storedSlots[$0]] }
            names = kept.map { names[$0] }
            stored = kept.map { stored[$0] }
        }
        // Azure's value limits, checked as entities are made, so a template or row that makes
        // a value too long fails before anything is written (not at the batch).
        for (name, value) in zip(names, stored) {
            if let problem = StorageNames.valueProblem(value) {
                throw GenerationError(
                    "\(engine.datasetFile):\(engine.spec.line): kind '\(engine.spec.name)', entity (\(engine.spec.partition), \(rowKey.text)): property '\(name)' \(problem); shorten its template or value"
                )
            }
        }
        return GeneratedEntity(partitionKey: engine.spec.partition, rowKey: rowKey.text, names: names, values: stored)
    }

    private mutating func evaluate(identity: UInt128, ordinal: Int, index: Int) throws(GenerationError) {
        for i in absent.indices { absent[i] = false }
        if let rows = engine.spec.rows {
            let row = rows[Int(identity)]
            for (i, cell) in row.values.enumerated() {
                values[i] = cell.1
                if !row.absent.isEmpty, row.absent.contains(cell.0) { absent[i] = true }
            }
        }
        var random = SeedRandom.forEntity(stream: engine.stream, identity: identity)
        engine.keySpace?.digits(of: identity, into: &self.digits)
        let digits: [UInt128]? = engine.keySpace == nil ? nil : self.digits
        let base = engine.columnCount
        for (i, op) in engine.ops.enumerated() {
            let slot = base + i
            switch op {
            case .value(let v):
                values[slot] = v
                choices[slot] = 0
            case .pick(let list, let key):
                let choice = Int(choose(key, digits, UInt64(list.count), &random))
                values[slot] = list[choice]
                choices[slot] = choice
            case .dealtPick(let list, let cumulative, let seed):
                let run = cumulative[cumulative.count - 1]
                let place = IndexPermutation(size: run, seed: SeedRandom.mix(seed ^ (UInt64(index) / run)))(UInt64(index) % run)
                let choice = Self.share(of: place, in: cumulative)
                values[slot] = list[choice]
                choices[slot] = choice
            case .weightedPick(let list, let cumulative):
                let choice = Self.share(of: random.below(cumulative[cumulative.count - 1]), in: cumulative)
                values[slot] = list[choice]
                choices[slot] = choice
            case .date(let first, let step, let count, let key):
                values[slot] = .dateTime(EdmDateTime(ticks: first + Int64(choose(key, digits, count, &random)) * step))
            case .int(let min, let count, let type, let key):
                let offset = key.flatMap { k in digits.map { $0[k] } } ?? random.upTo(count - 1)
                values[slot] = intValue(Int128(min) + Int128(offset), type)
            case .double(let min, let width, let scale):
                let x = min + random.unit() * width
                values[slot] = .double(scale.map { (x * $0).rounded() / $0 } ?? x)
            case .unique(let domain, let permutation):
                values[slot] = domain.value(permutation(UInt64(index)))
            case .sequence(let start, let step, let type):
                // In a kind listed as rows or keyed by a sequence the identity is the entity's own
                // generation index (its row, its draw): the value is a function of it, so the
                // RowKey hashed from it and the value stored agree, and another count only adds
                // or removes entities. A kind drawn from a key space numbers its entities in
                // RowKey order (its sample is another one for another count anyway).
                let index = engine.spec.rows != nil || engine.keySpace == nil ? Int128(identity) : Int128(ordinal)
                let n = Int128(start) + index * Int128(step)
                values[slot] = type == .string ? .string(String(n)) : intValue(n, type)
            case .ref(let target, let key, let groups):
                let count = target.materialized!.count
                if let key, let digits {
                    let group = groups[Int(digits[key])]
                    refs[slot] = group.count == 1 ? group[0] : group[Int(random.below(UInt64(group.count)))]
                } else {
                    refs[slot] = Int(random.below(UInt64(count)))
                }
                choices[slot] = refs[slot]
            case .from(let refSlot, let property):
                guard case .ref(let target, _, _) = engine.ops[refSlot - base] else { continue }
                values[slot] = target.property(property, of: target.materialized![refs[refSlot]])
                choices[slot] = refs[refSlot]
            case .dateAfter(let refSlot, let property, let step, let steps):
                guard case .ref(let target, _, _) = engine.ops[refSlot - base] else { continue }
                guard case .dateTime(let start) = target.property(property, of: target.materialized![refs[refSlot]]) else {
                    throw GenerationError(
                        "\(engine.datasetFile): kind '\(engine.spec.name)', field '\(engine.slotNames[slot])': date.after names '\(target.storedNames[property])' of kind '\(target.spec.name)', which is no date there; name an Edm.DateTime property"
                    )
                }
                // Past 9999-12-31 there is no Edm.DateTime: the last one.
                let ticks = Int128(start.ticks) + Int128(random.below(steps)) * Int128(step)
                values[slot] = .dateTime(EdmDateTime(ticks: Int64(min(ticks, Int128(EdmDateTime.endOfRange.ticks - 1)))))
            case .template(let template, let sources):
                values[slot] = .string(render(template, sources, cache: i))
            case .fakeName:
                values[slot] = .string(Vocabulary.name(Int(random.below(UInt64(Vocabulary.nameCount)))))
            case .fakeEmail(let domain):
                values[slot] = .string(Vocabulary.email(of: Vocabulary.name(Int(random.below(UInt64(Vocabulary.nameCount)))), domain: domain))
            case .fakePhone:
                values[slot] = .string(Vocabulary.phone(Int(random.below(UInt64(Vocabulary.phoneCount)))))
            case .emailOf(let source, let domain):
                values[slot] = .string(Vocabulary.email(of: values[source].text, domain: domain))
            case .blobURL(let prefix, let template, let sources, let files, let container):
                let name = render(template, sources, cache: i)
                guard files.contains(ExactString(name)) else {
                    let row = engine.spec.rows.map { "row at line \($0[Int(identity)].line)" } ?? "entity \(identity)"
                    throw GenerationError(
                        "kind '\(engine.spec.name)', \(row): field '\(engine.slotNames[slot])' names blob '\(name)', which is not a file of container '\(container)'; add the file or fix the name"
                    )
                }
                values[slot] = .string(prefix + PercentEncoding.path(name))
            }
        }
        // Optional fields draw after every field, so adding `presence` to one changes no other value.
        for (i, presence) in engine.presence.enumerated() {
            if let presence, random.unit() >= presence { absent[base + i] = true }
        }
    }

    /// The value whose share of the running totals holds `draw`.
    static func share(of draw: UInt64, in cumulative: [UInt64]) -> Int {
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] > draw { high = middle } else { low = middle + 1 }
        }
        return low
    }

    private func choose(_ key: Int?, _ digits: [UInt128]?, _ count: UInt64, _ random: inout SeedRandom) -> UInt64 {
        if let key, let digits { return UInt64(digits[key]) }
        return random.below(count)
    }

    private mutating func render(_ template: Template, _ sources: [VariableSource], cache: Int) -> String {
        if numbered[cache] != nil {
            var number = 0
            for (slot, stride) in numbered[cache]!.strides { number += choices[slot] * stride }
            if let hit = numbered[cache]!.texts[number] { return hit }
            let text = template.render(context(sources))
            numbered[cache]!.texts[number] = text
            return text
        }
        var key: [TemplateInput] = []
        key.reserveCapacity(sources.count)
        for source in sources {
            switch source {
            case .slot(_, let index): key.append(.value(values[index]))
            case .refProperty(_, _, let slot, _): key.append(.entity(refs[slot]))
            }
        }
        if let hit = templateCaches[cache]?[key] { return hit }
        let text = template.render(context(sources))
        if templateCaches[cache, default: [:]].count < EntityBuilder.cacheLimit { templateCaches[cache, default: [:]][key] = text }
        return text
    }

    /// The values a template's variables name, for the entity being made.
    private func context(_ sources: [VariableSource]) -> [ExactString: TemplateValue] {
        var context: [ExactString: TemplateValue] = [:]
        for source in sources {
            switch source {
            case .slot(let name, let index):
                context[ExactString(name)] = .text(values[index].text)
            case .refProperty(let ref, let property, let slot, let propertyIndex):
                guard case .ref(let target, _, _) = engine.ops[slot - engine.columnCount] else { continue }
                var nested: [ExactString: String] = [:]
                if case .object(let fields)? = context[ExactString(ref)] { nested = fields }
                nested[ExactString(property)] = target.property(propertyIndex, of: target.materialized![refs[slot]]).text
                context[ExactString(ref)] = .object(nested)
            }
        }
        return context
    }

    /// A template's outputs by the number its inputs' choices make (mixed radix, the first
    /// input least significant).
    struct NumberedCache {
        var strides: [(slot: Int, stride: Int)]
        var texts: [String?]

        /// Nil when an input is not a list entry or the combinations are too many.
        init?(sources: [VariableSource], engine: KindEngine) {
            var strides: [(Int, Int)] = []
            var size = 1
            for source in sources {
                let slot: Int
                switch source {
                case .slot(_, let index): slot = index
                case .refProperty(_, _, let refSlot, _): slot = refSlot
                }
                guard slot >= engine.columnCount, let count = Self.entries(engine.ops[slot - engine.columnCount], engine) else { return nil }
                strides.append((slot, size))
                let (product, overflow) = size.multipliedReportingOverflow(by: max(count, 1))
                guard !overflow, product <= EntityBuilder.cacheLimit else { return nil }
                size = product
            }
            self.strides = strides
            texts = Array(repeating: nil, count: size)
        }

        /// How many entries the list an op chooses from holds; nil when it chooses none.
        private static func entries(_ op: FieldOp, _ engine: KindEngine) -> Int? {
            switch op {
            case .value: return 1
            case .pick(let list, _), .weightedPick(let list, _), .dealtPick(let list, _, _): return list.count
            case .ref(let target, _, _): return target.materialized?.count
            case .from(let refSlot, _):
                guard case .ref(let target, _, _) = engine.ops[refSlot - engine.columnCount] else { return nil }
                return target.materialized?.count
            default: return nil
            }
        }
    }
}

/// What a template's output depends on: a field's value, or which entity a ref names.
enum TemplateInput: Hashable {
    case value(EdmValue)
    case entity(Int)
}

func intValue(_ n: Int128, _ type: EdmType) -> EdmValue {
    type == .int32 ? .int32(Int32(n)) : .int64(Int64(n))
}
