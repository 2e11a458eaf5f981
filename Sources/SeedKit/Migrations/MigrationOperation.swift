import AzureStorage

/// One step of a migration, applied in order. Entity steps are pure functions of the entity
/// they read (``EntityStep/apply(to:)``), so a write refused because the entity changed
/// meanwhile is re-read and the step applied again.
public enum MigrationOperation: Sendable {
    case createTable(String)
    case deleteTable(String)
    /// Every entity of `from` written to `to` (created when missing) as it is, replacing one of
    /// the same keys: idempotent, so a stopped copy is run again whole.
    case copyTable(from: String, to: String)
    /// A step over the entities of a table that `where` selects.
    case entities(EntityStep)
    /// A step over the blobs of a container under a prefix.
    case blobs(BlobStep)

    /// The operation's name in the file (`rename-property`).
    public var name: String {
        switch self {
        case .createTable: "create-table"
        case .copyTable: "copy-table"
        case .deleteTable: "delete-table"
        case .entities(let step): step.change.name
        case .blobs(let step): step.change.name
        }
    }

    /// The table it works on, or for a blob operation its container.
    public var table: String {
        switch self {
        case .createTable(let table), .deleteTable(let table), .copyTable(let table, _): table
        case .entities(let step): step.table
        case .blobs(let step): step.container
        }
    }

    /// Whether it works on blobs (its ``table`` is a container).
    public var isBlobOperation: Bool {
        if case .blobs = self { return true }
        return false
    }
}

/// A change to each blob of `container` whose name starts with `prefix` (byte-wise).
public struct BlobStep: Sendable {
    public var container: String
    public var prefix: String
    public var change: BlobChange
    /// The part of the blobs a sharded run (`--shard I/N`) takes, by container and name.
    public var shard: Shard?

    public init(container: String, prefix: String, change: BlobChange, shard: Shard? = nil) {
        self.container = container
        self.prefix = prefix
        self.change = change
        self.shard = shard
    }

    /// Whether the step takes the blob named `name`.
    public func selects(_ name: String) -> Bool {
        name.utf8.starts(with: prefix.utf8) && (shard?.owns(container: container, blob: name) ?? true)
    }
}

/// What a blob step does to one blob.
public enum BlobChange: Sendable {
    /// Server-side copy to `toContainer`, the prefix replaced by `toPrefix`, then delete.
    case move(toContainer: String, toPrefix: String)
    /// Content type, cache control and metadata (the names given; the others kept).
    case setProperties(contentType: String?, cacheControl: String?, metadata: [String: String])
    case delete

    public var name: String {
        switch self {
        case .move: "move-blobs"
        case .setProperties: "set-blob-properties"
        case .delete: "delete-blobs"
        }
    }
}

/// A change to each entity of `table` that `filter` selects.
public struct EntityStep: Sendable {
    public var table: String
    /// The `where:` text, sent to the service as `$filter`.
    public var filterText: String?
    /// The same filter, parsed: each entity the service returns is checked again.
    let filter: FilterExpression?
    public var change: EntityChange
    /// The partitions a sharded run (`--shard I/N`) takes.
    public var shard: Shard?

    init(table: String, filterText: String?, filter: FilterExpression?, change: EntityChange, shard: Shard? = nil) {
        self.table = table
        self.filterText = filterText
        self.filter = filter
        self.change = change
        self.shard = shard
    }

    /// Whether the step selects `entity`: its shard's partitions, and its `where:` evaluated as
    /// the service does.
    public func selects(_ entity: TableEntity) -> Bool {
        (shard?.owns(partition: entity.partitionKey) ?? true) && (filter?.matches(entity) ?? true)
    }

    /// Whether `where:` selects `entity` (every partition counted, whatever the shard): what
    /// the service returns for the step's query.
    public func matchesWhere(_ entity: TableEntity) -> Bool { filter?.matches(entity) ?? true }

    /// The comparisons `where:` holds.
    public var filterComparisons: Int { filter?.comparisonCount ?? 0 }

    /// Why `where:` may select nothing, given the types each property has in some of the
    /// table's entities (`seen`): a literal of another type than the property holds (Azure
    /// compares typed values: `Amount gt 100` is false for every Double), or a name where a
    /// string was meant (`PartitionKey eq orders` compares with a property `orders`).
    public func selectionHints(seen: [String: Set<EdmType>]) -> [String] {
        guard let filter else { return [] }
        var hints: [String] = []
        for (property, literal) in filter.literalComparisons {
            guard let types = seen[property], !types.isEmpty, !types.contains(literal.type) else { continue }
            let held = types.map(\.shortName).sorted().joined(separator: " and ")
            hints.append(
                "\(Printable.escaped(property)) holds \(held) in the entities read, and where: compares it with \(literal.type.withArticle) (\(Printable.escaped(literal.text))): Azure compares values of one type only; write the literal as \(held)"
            )
        }
        for (a, b) in filter.propertyComparisons {
            for name in [b, a] where seen[name] == nil && !["PartitionKey", "RowKey", "Timestamp"].contains(name) {
                hints.append(
                    "'\(Printable.escaped(name))' is read as a property, which no entity read has; a string is written in quotes: '\(Printable.escaped(name))'"
                )
                break
            }
        }
        return hints
    }
}

/// What an entity step does to one entity.
public enum EntityChange: Sendable {
    case renameProperty(from: String, to: String)
    case setProperty(name: String, value: SetValue, ifMissing: Bool)
    case removeProperty(String)
    case retypeProperty(name: String, to: EdmType, onFailure: RetypeFailure)
    case replaceInProperty(name: String, find: String, replace: String)
    case deleteEntities
    /// `map-values`: the property's value, by its text, replaced by the one the map gives (of
    /// the same type); a value in no mapping is kept or stops the run (``ValueMap/otherwise``).
    case mapValues(name: String, map: ValueMap)
    /// `split-property`: a String cut at its first separators into new String properties, the
    /// last taking the rest; the property itself removed.
    case splitProperty(name: String, separator: String, into: [String])
    /// `join-properties`: the properties' text joined by the separator into a new String
    /// property; the properties removed.
    case joinProperties(names: [String], separator: String, into: String)
    /// `compute`: the property set to an expression's value over the entity (``ComputeExpression``),
    /// written as `type` (else the property's own type, else the value's); `ifMissing` leaves an
    /// entity that has it alone.
    case compute(name: String, expression: ComputeExpression, type: EdmType?, ifMissing: Bool)
    /// `lookup`: the property set to another table's property, at keys made from templates.
    case lookup(name: String, LookupSpec)
    /// A change written in code (``CustomChange``).
    case custom(CustomChange)
    /// New keys from templates over the entity (nil keeps that key): the entity is inserted
    /// under them, then the old one deleted.
    case rekey(partition: EntityTemplate?, row: EntityTemplate?)
    /// What `migrate undo` runs for an invertible step (``EntityStep/inverse``): each entity the
    /// step would have made from another is put back as that other — and only when the step,
    /// applied to it, gives exactly this entity again.
    indirect case undo(EntityStep)

    /// Whether applying the step to what it made changes nothing more: then a batch applied
    /// twice (after a resume from an earlier checkpoint) is the same as once, and the runner may
    /// write batches concurrently with no pending record. Rename, remove, retype and delete are;
    /// a set is unless its template reads the property it sets; a text replacement is not (its
    /// result may hold what it finds again).
    public var isIdempotent: Bool {
        switch self {
        // A rekey is checked entity by entity: the new keys must give themselves again.
        case .renameProperty, .removeProperty, .retypeProperty, .deleteEntities, .rekey: true
        // A map holds no chain (checked when read) and leaves the values it writes alone; a
        // split or a join removes what it reads.
        case .mapValues, .splitProperty, .joinProperties: true
        case .custom(let change): change.idempotent
        case .lookup(let name, let spec): !spec.reads.contains { $0.utf8.elementsEqual(name.utf8) }
        // As a template: one that reads the property it writes would write it again.
        case .compute(let name, let expression, _, let ifMissing): ifMissing || !expression.reads.contains { $0.utf8.elementsEqual(name.utf8) }
        case .setProperty(let name, .value, _): !name.isEmpty
        case .setProperty(let name, .template(let template), _):
            !template.text.variables.contains { $0.utf8.elementsEqual(name.utf8) || $0.utf8.starts(with: (name + ".").utf8) }
        case .replaceInProperty: false
        // Putting a text back may leave a value that holds the replacement again.
        case .undo(let step): step.change.isIdempotent
        }
    }

    public var name: String {
        switch self {
        case .renameProperty: "rename-property"
        case .setProperty: "set-property"
        case .removeProperty: "remove-property"
        case .retypeProperty: "retype-property"
        case .replaceInProperty: "replace-in-property"
        case .deleteEntities: "delete-entities"
        case .rekey: "rekey"
        case .mapValues: "map-values"
        case .splitProperty: "split-property"
        case .joinProperties: "join-properties"
        case .compute: "compute"
        case .lookup: "lookup"
        case .custom(let change): change.name
        case .undo(let step): "undo " + step.change.name
        }
    }

    /// What `set-property` writes: a typed value, or a template over the entity's own values
    /// whose text is read as `type`.
    public enum SetValue: Sendable {
        case value(EdmValue)
        case template(EntityTemplate)
    }

    /// What `retype-property` does with a value it cannot convert.
    public enum RetypeFailure: String, Sendable, CaseIterable {
        case fail, skip, remove
    }
}

/// `map-values`' mapping, by the values' text compared byte for byte (as Azure compares
/// strings): each old text to a new one, written with the old value's type.
public struct ValueMap: Sendable {
    /// What happens to a value in no mapping (and not one the map writes).
    public enum Otherwise: String, Sendable, CaseIterable {
        /// Left as it is.
        case keep
        /// The run stops there, naming the entity.
        case fail
    }

    /// The mappings in the file's order.
    public let pairs: [(from: String, to: String)]
    public let otherwise: Otherwise
    private let forward: [ExactString: String]
    private let backward: [ExactString: String]
    /// Whether no two old values map to one new value: then undo can tell each back.
    public let isInjective: Bool

    public init(pairs: [(from: String, to: String)], otherwise: Otherwise) {
        self.pairs = pairs
        self.otherwise = otherwise
        var forward: [ExactString: String] = [:]
        var backward: [ExactString: String] = [:]
        var written: Set<ExactString> = []
        var injective = true
        for (from, to) in pairs {
            forward[ExactString(from)] = to
            if backward[ExactString(to)] != nil { injective = false }
            backward[ExactString(to)] = from
            written.formUnion(Self.texts(to).map { ExactString($0) })
        }
        self.forward = forward
        self.backward = backward
        self.written = written
        isInjective = injective
    }

    /// Every text `to` may be stored as: itself, and its text once written as each type it
    /// parses as (`02` is the whole number 2, whose text is `2`).
    static func texts(_ to: String) -> [String] {
        [to] + EdmType.allCases.filter { $0 != .string && $0 != .binary }.compactMap { EdmValue.parse(to, as: $0)?.text }
    }

    /// Every text the map may have written.
    private let written: Set<ExactString>

    /// The new text for `text`, if a mapping names it.
    public func to(_ text: String) -> String? { forward[ExactString(text)] }
    /// The old text a new `text` was made from, when only one maps to it.
    public func from(_ text: String) -> String? { isInjective ? backward[ExactString(text)] : nil }
    /// Whether `text` is one the map writes (as any type would store it).
    public func writes(_ text: String) -> Bool { written.contains(ExactString(text)) }
    /// The first old value that is also a new value another mapping writes — as written, or as
    /// a type stores it (`1: "02", 2: 3`: `02` is stored as 2 in a whole-number property): a
    /// chain, whose result would depend on how often the step runs.
    public var firstChain: String? {
        pairs.first { pair in writes(pair.from) && !(to(pair.from)?.utf8.elementsEqual(pair.from.utf8) ?? false) }?.from
    }
}

/// A `set-property` template: Mustache over the entity's own values (`{{EventLocation}}`,
/// `{{PartitionKey}}`, `{{RowKey}}`), its text read as `type`.
public struct EntityTemplate: Sendable {
    let text: MustacheText
    /// The template as the file wrote it.
    public let source: String
    public let type: EdmType
}
