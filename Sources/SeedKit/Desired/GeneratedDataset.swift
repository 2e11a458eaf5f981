import AzureStorage

/// A dataset made concrete for one seed and window: what an account should hold after
/// seeding — containers with their blobs, tables with their entities (made on demand) — and
/// the inputs that made it. ``storage`` is its form as a plan's goal (``DesiredStorage``),
/// the form a snapshot also takes.
public struct GeneratedDataset: Sendable {
    public let dataset: Dataset
    public let seed: UInt64
    public let window: ResolvedWindow
    /// The blob endpoint that `blobUrl` fields point into.
    public let blobEndpoint: String
    public let containers: [DesiredContainer]
    public let tables: [DesiredTable]
    /// The inputs it was made from (the reference time among them).
    public let options: GenerationOptions
}

/// Inputs that, with the dataset files, fully determine a desired state.
public struct GenerationOptions: Sendable {
    /// Overrides the dataset's seed.
    public var seed: UInt64?
    /// Entity counts by kind name, overriding the dataset's `count`.
    public var counts: [String: Int]
    /// The reference time for a relative window (a window `from: today` starts at its midnight UTC).
    public var now: EdmDateTime
    public var from: EdmDateTime?
    public var to: EdmDateTime?
    /// Overrides every container's access level.
    public var access: PublicAccess?
    /// The blob endpoint `blobUrl` fields point into (no trailing slash).
    public var blobEndpoint: String

    public init(
        seed: UInt64? = nil, counts: [String: Int] = [:], now: EdmDateTime, from: EdmDateTime? = nil, to: EdmDateTime? = nil,
        access: PublicAccess? = nil, blobEndpoint: String = GenerationOptions.developmentBlobEndpoint
    ) {
        self.seed = seed
        self.counts = counts
        self.now = now
        self.from = from
        self.to = to
        self.access = access
        self.blobEndpoint = blobEndpoint
    }

    /// The embedded storage's blob endpoint.
    public static let developmentBlobEndpoint = "http://127.0.0.1:10000/devstoreaccount1"
}

extension GeneratedDataset {
    /// Every kind with its table, each after the kinds it references: the order in which
    /// the planner matches entities and the executor writes them (speakers before events).
    public var kindsInDependencyOrder: [(table: DesiredTable, kind: KindSpec)] {
        GeneratedDataset.dependencyOrder(dataset).compactMap { kind in
            tables.first { $0.name == kind.table }.map { ($0, kind) }
        }
    }

    /// Builds the desired state of `dataset`. Rows, referenced kinds and every container's
    /// files are made and checked here; generated kinds are made again on each iteration.
    public static func make(_ dataset: Dataset, options: GenerationOptions) throws(GenerationError) -> GeneratedDataset {
        let seed = options.seed ?? dataset.seed
        let window = try ResolvedWindow.resolve(dataset.window, now: options.now, from: options.from, to: options.to)
        for (kindName, n) in options.counts.sorted(by: { $0.key < $1.key }) {
            guard let kind = dataset.kind(named: kindName) else {
                throw GenerationError(
                    usage: true, "dataset '\(dataset.name)' has no kind '\(kindName)' (kinds: \(dataset.kinds.map(\.name).joined(separator: ", ")))")
            }
            if kind.rows != nil { throw GenerationError(usage: true, "kind '\(kindName)' is made of explicit rows; its count cannot be changed") }
            if kind.entitiesFile != nil {
                throw GenerationError(usage: true, "kind '\(kindName)' copies its entities (entities:); its count cannot be changed")
            }
            if n < 1 { throw GenerationError(usage: true, "the count of '\(kindName)' must be at least 1") }
        }
        var containers: [DesiredContainer] = []
        for spec in dataset.containers {
            containers.append(try DesiredContainer.load(spec, access: options.access ?? spec.access, seed: seed, datasetFile: dataset.file))
        }
        let referenced = Set(
            dataset.kinds.flatMap { kind in
                kind.fields.compactMap { field -> String? in
                    if case .ref(let target) = field.generator { return target }
                    return nil
                }
            })
        var engines: [String: KindEngine] = [:]
        for kind in dependencyOrder(dataset) {
            let context = GenerationContext(
                dataset: dataset, seed: seed, window: window, counts: options.counts,
                blobEndpoint: options.blobEndpoint, containers: containers, engines: engines)
            if let file = kind.entitiesFile {
                engines[kind.name] = try KindEngine(copiedEntitiesOf: kind, file: file, context: context)
                continue
            }
            var engine = try KindEngine(spec: kind, context: context)
            // Refuse an impossible count now, before a storage command touches the target.
            if let keySpace = engine.keySpace { try engine.checkCapacity(keySpace, datasetFile: dataset.file) }
            if kind.rows != nil || referenced.contains(kind.name) {
                engine = try engine.materialize(datasetFile: dataset.file)
            }
            engines[kind.name] = engine
        }
        let tables = dataset.tables.map { table in
            DesiredTable(name: table.name, engines: table.kinds.map { engines[$0.name]! }, datasetFile: dataset.file)
        }
        return GeneratedDataset(
            dataset: dataset, seed: seed, window: window, blobEndpoint: options.blobEndpoint,
            containers: containers, tables: tables, options: options)
    }

    /// Kinds ordered so that every kind comes after the kinds it references (the validator
    /// has already ruled out cycles); ties keep declaration order.
    static func dependencyOrder(_ dataset: Dataset) -> [KindSpec] {
        var done: Set<String> = []
        var order: [KindSpec] = []
        func visit(_ kind: KindSpec) {
            guard !done.contains(kind.name) else { return }
            done.insert(kind.name)
            for field in kind.fields {
                if case .ref(let target) = field.generator, let next = dataset.kind(named: target) { visit(next) }
            }
            order.append(kind)
        }
        dataset.kinds.forEach(visit)
        return order
    }
}

extension GeneratedDataset {
    /// The same dataset at another reference time: itself when the window does not move (the
    /// reference time changes nothing else), else made again.
    public func at(now: EdmDateTime) throws(GenerationError) -> GeneratedDataset {
        var options = options
        options.now = now
        let window = try ResolvedWindow.resolve(dataset.window, now: now, from: options.from, to: options.to)
        guard window == self.window else { return try GeneratedDataset.make(dataset, options: options) }
        return GeneratedDataset(
            dataset: dataset, seed: seed, window: window, blobEndpoint: blobEndpoint, containers: containers, tables: tables, options: options)
    }
}
