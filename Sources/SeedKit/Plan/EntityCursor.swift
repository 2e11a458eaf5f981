import AzureStorage
import Foundation

/// A group's desired entities one at a time, in PartitionKey-then-RowKey byte order: what
/// the planner merges with the observed pages, so neither side is ever held whole.
public protocol EntityCursor {
    /// The next entity; nil after the last.
    mutating func next() async throws -> TableEntity?

    /// Whether every entity it gives already keeps Azure's rules but the size limit: its keys,
    /// property names and count checked once for the whole cursor, its values as they were
    /// made. The planner then checks only each entity's size.
    var checksShape: Bool { get }
}

extension EntityCursor {
    public var checksShape: Bool { false }
}

/// The entities of one generated kind, built one at a time from the kind's RowKey-sorted
/// identities (48 bytes an entity), or served from the kind's materialized list.
struct KindCursor: EntityCursor {
    private let engine: KindEngine
    private let identities: [Identity]
    private var builder: EntityBuilder
    private var ordinal = 0
    /// Only this shard's entities are built; the others are passed over by their RowKey,
    /// keeping their ordinals (a sequence counts every entity of the kind).
    private let shard: Shard?
    /// A generated kind's entities share its PartitionKey and property names (each holds all
    /// or some of them), their RowKeys are hex digests and their values are checked as they
    /// are built: when the kind's names and PartitionKey pass, every entity's shape does.
    let checksShape: Bool

    init(engine: KindEngine, datasetFile: String, shard: Shard? = nil) throws(GenerationError) {
        self.engine = engine
        checksShape =
            engine.storedNames.count <= StorageNames.maxProperties && StorageNames.keyProblem(engine.spec.partition) == nil
            && engine.storedNames.allSatisfy { StorageNames.propertyProblem($0) == nil }
        identities = engine.materialized == nil ? try engine.sortedIdentities(datasetFile: datasetFile) : []
        builder = EntityBuilder(engine: engine)
        self.shard = shard.flatMap { $0.count > 1 ? $0 : nil }
    }

    mutating func next() throws -> TableEntity? {
        let partition = engine.spec.partition
        if let made = engine.materialized {
            while ordinal < made.count {
                defer { ordinal += 1 }
                if shard?.owns(partitionKey: partition, rowKey: made[ordinal].rowKey) ?? true { return made[ordinal].tableEntity }
            }
            return nil
        }
        while ordinal < identities.count {
            defer { ordinal += 1 }
            let item = identities[ordinal]
            if let shard, !shard.owns(partitionKey: partition, rowKey: item.rowKey.text) { continue }
            return try builder.build(identity: item.identity, ordinal: ordinal, index: item.index, rowKey: item.rowKey).tableEntity
        }
        return nil
    }
}

/// The entities of a snapshot's table file, line by line. The file is read in 1 MiB chunks
/// on ``BlockingPool``'s threads (file reads block), never on the caller's.
struct SnapshotTableCursor: EntityCursor {
    private let path: String
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var line = 0
    private var atEnd = false

    init(file: URL) throws(SnapshotError) {
        path = file.relativePathForMessages
        guard let handle = FileHandle(forReadingAtPath: file.path) else {
            throw SnapshotError("\(path): cannot be read; check that the snapshot folder is complete and readable")
        }
        self.handle = handle
    }

    mutating func next() async throws -> TableEntity? {
        while true {
            if let end = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                defer { start = end + 1 }
                return try decodeLine(start..<end)
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return try decodeLine(start..<buffer.count)
            }
            buffer.removeFirst(start)
            start = 0
            let handle = self.handle
            let path = self.path
            let chunk = try await BlockingPool.run { () throws(SnapshotError) -> Data? in
                do { return try handle.read(upToCount: 1 << 20) } catch {
                    throw SnapshotError("\(path): cannot be read (\(FileProblem.describe(error))); check the snapshot folder")
                }
            }
            if let chunk, !chunk.isEmpty { buffer.append(contentsOf: chunk) } else { atEnd = true }
        }
    }

    private mutating func decodeLine(_ range: Range<Int>) throws(SnapshotError) -> TableEntity {
        line += 1
        return try SnapshotReader.decode(Array(buffer[range]), at: "\(path):\(line)")
    }
}

/// No entities.
struct EmptyCursor: EntityCursor {
    func next() -> TableEntity? { nil }
}
