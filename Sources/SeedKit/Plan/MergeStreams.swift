import AzureStorage
import Crypto

/// A group's desired entities as the merge takes them: each checked as Azure would check it
/// and against the key order, added to the desired digest, and with references to
/// recognised entities of earlier kinds rewritten to the RowKeys those really have.
struct DesiredStream {
    var cursor: any EntityCursor
    let group: EntityGroup?
    let remap: [String: [ExactString: String]]
    let digest: LineDigest?
    private var previous: (String, String)?

    init(cursor: any EntityCursor, group: EntityGroup?, remap: [String: [ExactString: String]], digest: LineDigest?) {
        self.cursor = cursor
        self.group = group
        self.remap = remap
        self.digest = digest
    }

    mutating func next() async throws -> TableEntity? {
        guard var entity = try await cursor.next(), let group else { return nil }
        // The whole desired state is checked while planning, before apply writes anything:
        // an entity Azure would refuse must not surface halfway through the batches.
        if let problem = cursor.checksShape ? Self.sizeProblem(entity) : StorageNames.entityProblem(entity) {
            throw GenerationError(
                "table \(group.table)\(group.kind.map { ", kind '\($0)'" } ?? ""): entity (\(entity.partitionKey), \(entity.rowKey)) \(problem); nothing was written"
            )
        }
        if let previous,
            previous.0.byteOrder(entity.partitionKey) > 0
                || (previous.0.isExactly(entity.partitionKey) && previous.1.byteOrder(entity.rowKey) >= 0)
        {
            // Generated kinds are sorted when made and snapshots are checked sorted when read.
            throw GenerationError(
                "table \(group.table): entity (\(entity.partitionKey), \(entity.rowKey)) comes after (\(previous.0), \(previous.1)) out of key order; this is a bug in azseed, please report it"
            )
        }
        previous = (entity.partitionKey, entity.rowKey)
        // Hashed on another thread while this one goes on (``LineDigest``).
        if let digest { await digest.add(entity) }
        for (field, target) in group.rowKeyReferences {
            // Most kinds recognise nothing (a first apply): no key to look up.
            guard let moved = remap[target], !moved.isEmpty else { continue }
            if case .string(let key)? = entity[field], let actual = moved[ExactString(key)] { entity[field] = .string(actual) }
        }
        return entity
    }
}

extension DesiredStream {
    /// What ``StorageNames/entityProblem(_:)`` says of an entity's size, for entities whose
    /// shape is already checked.
    static func sizeProblem(_ entity: TableEntity) -> String? {
        let size = StorageNames.entitySize(entity)
        guard size > StorageNames.maxEntityBytes else { return nil }
        return "is \(size) bytes as Azure counts them; an entity is at most \(StorageNames.maxEntityBytes) (1 MiB)"
    }
}

/// The observed entities of a pass's partitions, taken from the source's pages: checked to
/// come in byte order (else ``ObservedOrderError``), other partitions skipped, and each
/// partition read for the first time hashed for the observed digest.
struct ObservedStream {
    private var pages: (any ObservedEntityPages)?
    private let table: String
    private let owned: Set<ExactString>
    private let hashed: Set<ExactString>
    private var page: [TableEntity] = []
    private var position = 0
    private var previous: (String, String)?
    /// The last partition seen and whether it is owned and hashed: pages hold long runs of
    /// one partition, so the sets are consulted once a run.
    private var run: (partition: String, owned: Bool, hashed: Bool)?
    /// The partition being hashed: a large one on another thread as it is read (``LineDigest``).
    private var hashing: (partition: ExactString, hasher: LineDigest)?
    private var digests: [ExactString: SHA256.Digest] = [:]

    init(pages: (any ObservedEntityPages)?, table: String, owned: Set<ExactString>, hashed: Set<ExactString>) {
        self.pages = pages
        self.table = table
        self.owned = owned
        self.hashed = hashed
    }

    mutating func next() async throws -> TableEntity? {
        while true {
            if position == page.count {
                guard pages != nil, let more = try await pages!.next() else { return nil }
                page = more
                position = 0
                continue
            }
            let entity = page[position]
            position += 1
            if let previous,
                previous.0.byteOrder(entity.partitionKey) > 0
                    || (previous.0.isExactly(entity.partitionKey) && previous.1.byteOrder(entity.rowKey) >= 0)
            {
                throw ObservedOrderError(table: table, previous: previous, next: (entity.partitionKey, entity.rowKey))
            }
            previous = (entity.partitionKey, entity.rowKey)
            if run == nil || !run!.partition.isExactly(entity.partitionKey) {
                let partition = ExactString(entity.partitionKey)
                run = (entity.partitionKey, owned.contains(partition), hashed.contains(partition))
                if let current = hashing { digests[current.partition] = await current.hasher.finalize() }
                hashing = run!.hashed ? (partition, LineDigest()) : nil
            }
            guard run!.owned else { continue }
            if let hashing { await hashing.hasher.add(entity) }
            return entity
        }
    }

    /// The digests of the partitions hashed, once the stream is read to its end.
    mutating func finish() async -> [ExactString: SHA256.Digest] {
        if let current = hashing { digests[current.partition] = await current.hasher.finalize() }
        hashing = nil
        return digests
    }
}
