import AzureStorage

/// What an action does to one resource.
public enum PlanChange: String, Sendable, Equatable {
    case create, update, unchanged, delete
}

/// The actions that take a target to a desired state (docs/FORMATS.md, plans), in execution order:
/// containers, blobs, tables, then entities kind by kind (referenced kinds first), then
/// deletes. Unchanged entities are counted, not listed, unless they were recognised by
/// their natural key under a foreign RowKey.
public struct Plan: Sendable, Equatable {
    public var header: PlanHeader
    public var containers: [ContainerAction]
    public var blobs: [BlobAction]
    public var tables: [TableAction]
    /// Entity creates and updates, kind by kind, then natural-key matches left unchanged.
    public var entities: [EntityAction]
    /// Entity deletes (only with prune), by table, PartitionKey, RowKey.
    public var entityDeletes: [EntityAction]
    /// Unchanged entities by table (not listed in ``entities``).
    public var unchangedEntities: [String: Int]
    /// Entities in the dataset's partitions that the dataset does not hold, left in place
    /// because the plan does not prune.
    public var extraEntities: [String: Int]
    /// Blobs in the dataset's containers that the dataset does not hold, left in place.
    public var extraBlobs: [String: Int]
    /// Entity creates and deletes counted but not held (``PlanRetention``): empty for a whole plan.
    public var countedEntities: [CountedEntityActions] = []
    /// Each entity action's fingerprint, in order, held or counted: what a plan made again
    /// as it is written is checked against.
    public var fingerprints = ActionFingerprints()
    /// Set by ``Planner``, which checked every entity against Azure's rules before the plan
    /// existed: its batches are then sent without checking each entity again. A plan made any
    /// other way is checked as it is sent.
    package var entitiesChecked = false

    public var summary: PlanSummary {
        var s = PlanSummary()
        for c in containers { s.count(c.change) }
        for b in blobs { s.count(b.change) }
        for t in tables { s.count(t.change) }
        for e in entities { s.count(e.change) }
        for e in entityDeletes { s.count(e.change) }
        for c in countedEntities { s.count(c.change, c.count) }
        s.unchanged += unchangedEntities.values.reduce(0, +)
        return s
    }

    /// Whether the plan holds every action (a saved or JSON plan does); else some are only
    /// counted (``countedEntities``).
    public var isWhole: Bool { countedEntities.isEmpty }

    /// True when applying the plan would change nothing.
    public var isEmpty: Bool {
        let s = summary
        return s.create + s.update + s.delete == 0
    }
}

/// Counts of a plan's actions.
public struct PlanSummary: Sendable, Equatable {
    public var create = 0, update = 0, delete = 0, unchanged = 0

    public init() {}

    /// Counts `n` actions (one unless told).
    public mutating func count(_ change: PlanChange, _ n: Int = 1) {
        switch change {
        case .create: create += n
        case .update: update += n
        case .delete: delete += n
        case .unchanged: unchanged += n
        }
    }
}

/// What a plan was made from and against: enough to make it again and to tell whether the
/// target or the dataset changed since (the digests).
public struct PlanHeader: Sendable, Equatable {
    /// What the desired state came from.
    public enum Source: String, Sendable {
        case dataset, snapshot
        /// Another account (`azseed copy`): `dataset` names it, `datasetDirectory` is its blob endpoint.
        case account

        /// How plans name it: "dataset", "snapshot", "source account".
        public var noun: String {
            switch self {
            case .dataset: "dataset"
            case .snapshot: "snapshot"
            case .account: "source account"
            }
        }
    }

    public var target: PlanTarget
    public var source: Source
    /// The dataset's name (for a snapshot, the dataset recorded in it, if any).
    public var dataset: String
    /// The dataset or snapshot folder, absolute.
    public var datasetDirectory: String
    /// The seed and window; nil for a snapshot that did not record them.
    public var seed: UInt64?
    public var window: ResolvedWindow?
    /// Entity counts by kind that overrode the dataset's.
    public var counts: [String: Int]
    /// The access level that overrode the dataset's, if any.
    public var access: PublicAccess?
    public var prune: Bool
    /// SHA-256 of the desired state, hex.
    public var desiredDigest: String
    /// SHA-256 of what was observed, hex.
    public var observedDigest: String
    /// The shard the plan covers (`--shard I/N`); nil for the whole target.
    public var shard: Shard? = nil
    /// The reference time the dataset's relative window was resolved from; nil for a
    /// snapshot or a copy.
    public var now: EdmDateTime? = nil
    /// Set when `--now` moved the reference time the target's ledger recorded: what the
    /// plan changes besides data.
    public var nowMove: NowMove? = nil

    public init(
        target: PlanTarget, source: Source = .dataset, dataset: String, datasetDirectory: String, seed: UInt64?, window: ResolvedWindow?,
        counts: [String: Int], access: PublicAccess?, prune: Bool, desiredDigest: String = "", observedDigest: String = ""
    ) {
        self.target = target
        self.source = source
        self.dataset = dataset
        self.datasetDirectory = datasetDirectory
        self.seed = seed
        self.window = window
        self.counts = counts
        self.access = access
        self.prune = prune
        self.desiredDigest = desiredDigest
        self.observedDigest = observedDigest
    }
}

extension PlanHeader {
    /// The header with its reference time set.
    public func with(now: EdmDateTime) -> PlanHeader {
        var header = self
        header.now = now
        return header
    }
}

/// A reference time moved away from the one the target's ledger recorded for the dataset.
public struct NowMove: Sendable, Equatable {
    /// The recorded reference time and window.
    public var from: EdmDateTime
    public var fromWindow: ResolvedWindow
    /// The reference time `--now` gave.
    public var to: EdmDateTime
    /// When the apply that recorded `from` ran.
    public var recordedAt: EdmDateTime

    public init(from: EdmDateTime, fromWindow: ResolvedWindow, to: EdmDateTime, recordedAt: EdmDateTime) {
        self.from = from
        self.fromWindow = fromWindow
        self.to = to
        self.recordedAt = recordedAt
    }
}

/// The account a plan is for, without secrets.
public struct PlanTarget: Sendable, Equatable {
    public var account: String
    public var blobEndpoint: String
    public var tableEndpoint: String
    /// The embedded storage's data folder (absolute) when the target is the embedded storage.
    public var embeddedDataDirectory: String?

    public init(account: String, blobEndpoint: String, tableEndpoint: String, embeddedDataDirectory: String? = nil) {
        self.account = account
        self.blobEndpoint = blobEndpoint
        self.tableEndpoint = tableEndpoint
        self.embeddedDataDirectory = embeddedDataDirectory
    }

    /// How the target reads in messages.
    public var displayName: String {
        if let embeddedDataDirectory { return "the embedded storage in \(embeddedDataDirectory)" }
        return "\(account) (\(tableEndpoint))"
    }
}

public struct ContainerAction: Sendable, Equatable {
    public var name: String
    public var change: PlanChange
    public var access: PublicAccess
    /// The current access level when the action changes it.
    public var currentAccess: PublicAccess?
    /// The metadata to set, when the action sets it (it differs, or the container is new).
    public var metadata: [String: String]? = nil
}

public struct BlobAction: Sendable, Equatable {
    public var container: String
    public var name: String
    public var change: PlanChange
    /// The desired blob (nil for a delete).
    public var blob: DesiredBlob?
    /// What differs, for an update: `md5`, `contentType`.
    public var reasons: [String]
    /// The observed MD5, for updates and deletes.
    public var currentMD5: String?
    public var currentContentType: String?
    /// The observed access tier, for updates whose reasons include `tier`.
    public var currentAccessTier: String? = nil
    /// The observed blob's ETag (quoted, as headers carry it), for updates and deletes: apply
    /// writes only over that blob, and a create only where no blob is, so a blob someone else
    /// wrote since the plan is never replaced.
    public var currentETag: String? = nil
}

public struct TableAction: Sendable, Equatable {
    public var name: String
    public var change: PlanChange
}

/// One property's change in an entity update; nil means absent.
public struct PropertyChange: Sendable, Equatable {
    public var name: String
    public var from: EdmValue?
    public var to: EdmValue?

    /// The name by its bytes, as Azure compares property names.
    public static func == (a: PropertyChange, b: PropertyChange) -> Bool { a.name.isExactly(b.name) && a.from == b.from && a.to == b.to }
}

public struct EntityAction: Sendable, Equatable {
    public var table: String
    /// The kind the entity belongs to; nil for an entity the dataset does not hold.
    public var kind: String?
    public var partitionKey: String
    /// The RowKey written or deleted: the existing one when the entity was recognised by
    /// its natural key.
    public var rowKey: String
    public var change: PlanChange
    /// Property changes of an update, sorted by name.
    public var changes: [PropertyChange]
    /// The entity to write (creates and updates).
    public var entity: TableEntity?
    /// Set when an existing entity under another RowKey was recognised by its natural key:
    /// the RowKey the dataset would have given it.
    public var desiredRowKey: String?
    /// The natural key as `Field=value` pairs, for messages. A create's is made from its
    /// entity when asked: most creates of a large plan are counted, never shown, and a pass
    /// that writes them shows none.
    public var naturalKey: [(String, String)] {
        get {
            if let statedNaturalKey { return statedNaturalKey }
            guard let entity else { return [] }
            return naturalKeyFields.compactMap { field in entity[field].map { (field, $0.text) } }
        }
        set { statedNaturalKey = newValue }
    }
    private var statedNaturalKey: [(String, String)]?
    /// The kind's natural-key fields, when ``naturalKey`` is made from the entity.
    private var naturalKeyFields: [String] = []
    /// The observed entity's ETag, for updates and deletes: apply writes only over the entity
    /// the plan saw (`If-Match`). Not part of the action's value (``==``).
    public var etag: String? = nil

    public init(
        table: String, kind: String?, partitionKey: String, rowKey: String, change: PlanChange, changes: [PropertyChange] = [],
        entity: TableEntity? = nil, desiredRowKey: String? = nil, naturalKey: [(String, String)] = []
    ) {
        self.table = table
        self.kind = kind
        self.partitionKey = partitionKey
        self.rowKey = rowKey
        self.change = change
        self.changes = changes
        self.entity = entity
        self.desiredRowKey = desiredRowKey
        self.statedNaturalKey = naturalKey
    }

    /// A create whose ``naturalKey`` is made from `entity`'s `naturalKeyFields` when asked.
    init(table: String, kind: String?, creating entity: TableEntity, naturalKeyFields: [String]) {
        self.init(table: table, kind: kind, partitionKey: entity.partitionKey, rowKey: entity.rowKey, change: .create, entity: entity)
        self.statedNaturalKey = nil
        self.naturalKeyFields = naturalKeyFields
    }

    /// Keys and text compared by their bytes, as Azure compares them.
    public static func == (a: EntityAction, b: EntityAction) -> Bool {
        func same(_ x: String?, _ y: String?) -> Bool { x == nil ? y == nil : y.map { x!.isExactly($0) } ?? false }
        return a.table.isExactly(b.table) && same(a.kind, b.kind) && a.partitionKey.isExactly(b.partitionKey) && a.rowKey.isExactly(b.rowKey)
            && a.change == b.change && a.changes == b.changes && a.entity == b.entity && same(a.desiredRowKey, b.desiredRowKey)
            && a.naturalKey.count == b.naturalKey.count
            && zip(a.naturalKey, b.naturalKey).allSatisfy { $0.0.isExactly($1.0) && $0.1.isExactly($1.1) }
    }
}
