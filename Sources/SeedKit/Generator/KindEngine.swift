import AzureStorage
import Foundation

/// A kind compiled against a resolved window and seed: it knows how to make any of its
/// entities from that entity's identity alone.
///
/// Draw order (part of the determinism contract): each kind has its own stream,
/// `SeedRandom.stream(seed:name: "<table>/<kind>")`. A generated kind first draws its set
/// of key indices from that stream (``KeySpace/sample``); then each entity has a stream of
/// its own seeded by its identity (its key index, or its row or sequence ordinal), from
/// which the non-key fields draw in declaration order: pick, date and ref one bounded
/// integer each, int one (128-bit for wide ranges), double one unit value, a keyed ref one
/// bounded integer only when its group has more than one entity.
final class KindEngine: Sendable {
    let spec: KindSpec
    let stream: UInt64
    let naturalKey: NaturalKey
    /// Slot names: row columns, then fields.
    let slotNames: [String]
    /// Stored property names, sorted byte-wise, and their slots.
    let storedNames: [String]
    /// The dataset file, for messages.
    let datasetFile: String
    let storedSlots: [Int]
    /// Slots of the key fields, in key order.
    let keySlots: [Int]
    let ops: [FieldOp]
    /// Per op, the fraction of entities holding it (`presence`), nil for all.
    let presence: [Double?]
    let columnCount: Int
    let keySpace: KeySpace?
    /// How each key field's part of the RowKey hash input is made (generated kinds).
    let keyPieces: [KeyPiece]
    /// Entities made up front: every row kind, and generated kinds another kind references.
    let materialized: [GeneratedEntity]?
    /// A copied kind's file when its lines are already in RowKey byte order (as `scan` writes
    /// them): its entities are read from it one at a time, never held (``CopiedEntityReader``).
    let copiedFile: URL?
    /// The number of entities this kind makes.
    let count: Int

    init(spec: KindSpec, context: GenerationContext) throws(GenerationError) {
        self.spec = spec
        datasetFile = context.dataset.file
        stream = SeedRandom.stream(seed: context.seed, name: "\(spec.table)/\(spec.name)")
        naturalKey = NaturalKey(dataset: context.dataset.name, kind: spec.name)
        let columns = spec.columns
        columnCount = columns.count
        slotNames = columns + spec.fields.map(\.name)
        let stored = spec.storedNames.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        storedNames = stored
        let names = slotNames
        storedSlots = stored.map { n in names.firstIndex(of: n)! }
        keySlots = spec.key.map { k in names.firstIndex(of: k)! }

        let compiler = FieldCompiler(spec: spec, slotNames: slotNames, context: context)
        let compiled = try compiler.compile()
        ops = compiled.ops
        presence = spec.fields.map(\.presence)
        keySpace = compiled.keySpace
        keyPieces = KindEngine.keyPieces(spec: spec, slots: keySlots, ops: compiled.ops, columnCount: columns.count)
        if spec.rows != nil {
            count = spec.rows!.count
        } else {
            count = context.counts[spec.name] ?? spec.count ?? 0
        }
        materialized = nil
        copiedFile = nil
    }

    /// A kind of copied entities (`entities: FILE`): every line of the file one entity, kept as
    /// it is and served in RowKey byte order. Each line is checked as Azure would check the
    /// entity (keys, names, values, size); its PartitionKey must be the kind's, and no RowKey
    /// may come twice — a file that breaks any of it stops the run before the first write,
    /// naming the line. Reads the file: call it from a thread that may block.
    init(copiedEntitiesOf spec: KindSpec, file: URL, context: GenerationContext) throws(GenerationError) {
        // A first pass checks every line and learns the names and whether the lines are in
        // RowKey byte order; in order (as `scan` writes them), a RowKey twice is two lines side
        // by side and nothing is kept. Out of order, the entities are held and sorted.
        var names = Set<ExactString>()
        var count = 0
        var previous: (rowKey: String, line: Int)?
        var inOrder = true
        var held: [GeneratedEntity] = []
        var lines: [ExactString: Int] = [:]
        try CopiedEntityReader.forEach(file, kind: spec) { entity, line throws(GenerationError) in
            count += 1
            for name in entity.properties.keys { names.insert(ExactString(name)) }
            if inOrder, let previous {
                if previous.rowKey.utf8.elementsEqual(entity.rowKey.utf8) {
                    throw CopiedEntityReader.twice(entity.rowKey, at: line, first: previous.line, file: file)
                }
                if !previous.rowKey.utf8.lexicographicallyPrecedes(entity.rowKey.utf8) {
                    // Out of order: from here the entities are held (those before read again).
                    inOrder = false
                    try CopiedEntityReader.forEach(file, kind: spec, upTo: line - 1) { earlier, earlierLine throws(GenerationError) in
                        lines[ExactString(earlier.rowKey)] = earlierLine
                        held.append(CopiedEntityReader.generated(earlier))
                    }
                }
            }
            previous = (entity.rowKey, line)
            guard !inOrder else { return }
            if let first = lines.updateValue(line, forKey: ExactString(entity.rowKey)) {
                throw CopiedEntityReader.twice(entity.rowKey, at: line, first: first, file: file)
            }
            held.append(CopiedEntityReader.generated(entity))
        }
        held.sort { $0.rowKey.utf8.lexicographicallyPrecedes($1.rowKey.utf8) }
        self.spec = spec
        datasetFile = context.dataset.file
        stream = SeedRandom.stream(seed: context.seed, name: "\(spec.table)/\(spec.name)")
        naturalKey = NaturalKey(dataset: context.dataset.name, kind: spec.name)
        storedNames = names.map(\.string).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        slotNames = storedNames
        storedSlots = Array(storedNames.indices)
        keySlots = []
        ops = []
        presence = []
        columnCount = 0
        keySpace = nil
        keyPieces = []
        self.count = count
        materialized = inOrder ? nil : held
        copiedFile = inOrder ? file : nil
    }

    private init(copying other: KindEngine, materialized: [GeneratedEntity]) {
        spec = other.spec
        datasetFile = other.datasetFile
        stream = other.stream
        naturalKey = other.naturalKey
        slotNames = other.slotNames
        storedNames = other.storedNames
        storedSlots = other.storedSlots
        keySlots = other.keySlots
        ops = other.ops
        presence = other.presence
        columnCount = other.columnCount
        keySpace = other.keySpace
        keyPieces = other.keyPieces
        count = other.count
        self.materialized = materialized
        copiedFile = nil
    }

    /// Precomputes the RowKey hash pieces of key fields whose values come from a small list.
    private static func keyPieces(spec: KindSpec, slots: [Int], ops: [FieldOp], columnCount: Int) -> [KeyPiece] {
        slots.map { slot -> KeyPiece in
            guard slot >= columnCount else { return .computed(slot: slot) }
            let name = spec.key[slots.firstIndex(of: slot)!]
            switch ops[slot - columnCount] {
            case .value(let v):
                return .constant(NaturalKey.piece(field: name, value: v))
            case .pick(let values, let key?):
                return .table(component: key, pieces: values.map { NaturalKey.piece(field: name, value: $0) })
            case .from(let refSlot, let property):
                guard case .ref(let target, let key?, let groups) = ops[refSlot - columnCount], let made = target.materialized else {
                    return .computed(slot: slot)
                }
                return .table(component: key, pieces: groups.map { NaturalKey.piece(field: name, value: target.property(property, of: made[$0[0]])) })
            default:
                return .computed(slot: slot)
            }
        }
    }

    /// This engine with every entity made and kept, for kinds that others reference.
    func materialize(datasetFile: String) throws(GenerationError) -> KindEngine {
        var entities: [GeneratedEntity] = []
        entities.reserveCapacity(count)
        var builder = EntityBuilder(engine: self)
        for (ordinal, item) in try sortedIdentities(datasetFile: datasetFile).enumerated() {
            entities.append(try builder.build(identity: item.identity, ordinal: ordinal, index: item.index, rowKey: item.rowKey))
        }
        return KindEngine(copying: self, materialized: entities)
    }

    /// The value of stored property `index` of `entity` (PartitionKey and RowKey by their
    /// ``PropertyIndex`` codes).
    func property(_ index: Int, of entity: GeneratedEntity) -> EdmValue {
        switch index {
        case PropertyIndex.partitionKey: .string(entity.partitionKey)
        case PropertyIndex.rowKey: .string(entity.rowKey)
        default:
            // An entity missing optional properties holds fewer values: find it by name; an
            // absent property reads as empty text.
            entity.names.count == storedNames.count
                ? entity.values[index]
                : entity.names.firstIndex(of: storedNames[index]).map { entity.values[$0] } ?? .string("")
        }
    }

    func propertyIndex(_ name: String) -> Int? {
        if name == "PartitionKey" { return PropertyIndex.partitionKey }
        if name == "RowKey" { return PropertyIndex.rowKey }
        return storedNames.firstIndex(of: name)
    }

    /// The most entities one kind makes in a run.
    static let maxEntities = 50_000_000

    /// The key space's size, or a usage error when it cannot hold ``count`` distinct keys.
    @discardableResult
    func checkCapacity(_ keySpace: KeySpace, datasetFile: String) throws(GenerationError) -> UInt128 {
        guard let capacity = keySpace.capacity, capacity >= UInt128(count) else {
            let limit = keySpace.capacity.map { "\($0)" } ?? "more than 2^128"
            throw GenerationError(
                usage: true,
                "kind '\(spec.name)': cannot make \(count) unique entities; its key space \(keySpace.explanation) holds \(limit). Ask for fewer, or widen the window (\(Setting.windowStart)/\(Setting.windowEnd)) or the vocabulary in \(datasetFile):\(spec.line)"
            )
        }
        return capacity
    }

    /// Every identity with its RowKey and generation index (its row, or the place of its key
    /// in the draw), sorted by RowKey. Holds 48 bytes an entity: the only memory that grows
    /// with the count.
    func sortedIdentities(datasetFile: String) throws(GenerationError) -> [Identity] {
        // The identities are held in memory (32 bytes each): a count a dataset's author (or a
        // flag) makes huge is refused before anything is allocated.
        guard count <= Self.maxEntities else {
            throw GenerationError(
                usage: true,
                "kind '\(spec.name)': \(count) entities is more than one run makes (at most \(Self.maxEntities)); ask for fewer, or split the kind in \(datasetFile):\(spec.line)"
            )
        }
        var keyed: [Identity] = []
        var builder = EntityBuilder(engine: self)
        if let rows = spec.rows {
            var seen: [RowKeyBits: Int] = [:]
            for (i, row) in rows.enumerated() {
                let key = try builder.keyByBuilding(identity: UInt128(i), ordinal: i)
                if let other = seen[key] {
                    throw GenerationError(
                        "\(datasetFile):\(row.line): kind '\(spec.name)': this row has the same key (\(spec.key.joined(separator: ", "))) as the row at line \(rows[other].line)"
                    )
                }
                seen[key] = i
                keyed.append(Identity(rowKey: key, identity: UInt128(i), index: i))
            }
        } else if let keySpace {
            let capacity = try checkCapacity(keySpace, datasetFile: datasetFile)
            var indices: [UInt128] = []
            indices.reserveCapacity(count)
            var random = SeedRandom(seed: stream)
            KeySpace.sample(count: count, capacity: capacity, random: &random) { indices.append($0) }
            keyed = rowKeys(of: indices)
        } else {
            // Keyed by a sequence: every ordinal is its own entity.
            for i in 0..<count {
                keyed.append(Identity(rowKey: try builder.keyByBuilding(identity: UInt128(i), ordinal: i), identity: UInt128(i), index: i))
            }
        }
        IdentitySort.sort(&keyed)
        return keyed
    }
}

extension KindEngine {
    /// The RowKeys of key indices, hashed on every core: each key depends only on its own
    /// index, so the result is the same whatever the number of threads.
    fileprivate func rowKeys(of indices: [UInt128]) -> [Identity] {
        var keyed = [Identity](repeating: Identity(rowKey: RowKeyBits([]), identity: 0, index: 0), count: indices.count)
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, indices.count / 10_000, 16))
        let chunk = (indices.count + workers - 1) / max(workers, 1)
        keyed.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let out = buffer
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                let end = min(indices.count, (worker + 1) * chunk)
                var i = worker * chunk
                if var hasher = KeyIndexHasher(engine: self) {
                    while i < end {
                        out[i] = Identity(rowKey: hasher.rowKey(indices[i]), identity: indices[i], index: i)
                        i += 1
                    }
                    return
                }
                var builder = EntityBuilder(engine: self)
                while i < end {
                    out[i] = Identity(rowKey: builder.keyFromSpace(indices[i]), identity: indices[i], index: i)
                    i += 1
                }
            }
        }
        return keyed
    }
}

/// One entity to make: its RowKey, its identity (what seeds its stream) and its generation
/// index (what `unique:` fields go by).
struct Identity: Sendable {
    var rowKey: RowKeyBits
    var identity: UInt128
    var index: Int
}

/// What every kind is compiled against.
struct GenerationContext {
    let dataset: Dataset
    let seed: UInt64
    let window: ResolvedWindow
    let counts: [String: Int]
    let blobEndpoint: String
    let containers: [DesiredContainer]
    /// Engines of kinds already compiled (refs point backwards in dependency order).
    let engines: [String: KindEngine]
}
