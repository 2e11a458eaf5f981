import AzureStorage

/// A kind's entities, built a chunk ahead on ``BlockingPool``'s threads while the planner
/// merges, checks and hashes the chunk before.
///
/// Nothing is written before the whole plan is checked, so while a plan is made the storage
/// is idle and the planner had one of the two cores to itself: building the next entities
/// beside it uses the other. Same entities, same order: one build runs at a time, each
/// started only after the one before was taken.
struct PrefetchingCursor: EntityCursor {
    /// Entities built at a time: about 0.7 MB of SpeakEasy events, two chunks held at most.
    static let chunkSize = 512

    /// What one build hands over: entities in order, then, at the end, the error that stopped
    /// it (thrown once the entities before it were taken).
    struct Chunk: Sendable {
        var entities: [TableEntity]
        var error: (any Error)?
        var done: Bool
    }

    /// The kind's cursor, advanced by one build at a time (never two at once: each build is
    /// started after the previous one's result was awaited).
    private final class Source: @unchecked Sendable {
        var cursor: KindCursor
        init(_ cursor: KindCursor) { self.cursor = cursor }

        func build() -> Chunk {
            var entities: [TableEntity] = []
            entities.reserveCapacity(PrefetchingCursor.chunkSize)
            do {
                while entities.count < PrefetchingCursor.chunkSize, let entity = try cursor.next() { entities.append(entity) }
                return Chunk(entities: entities, error: nil, done: entities.count < PrefetchingCursor.chunkSize)
            } catch {
                return Chunk(entities: entities, error: error, done: true)
            }
        }
    }

    private let source: Source
    private var pending: Task<Chunk, Never>?
    private var current: [TableEntity] = []
    private var position = 0
    private var failure: (any Error)?
    let checksShape: Bool

    init(_ cursor: KindCursor) {
        checksShape = cursor.checksShape
        source = Source(cursor)
        pending = Self.build(source)
    }

    /// Entity building is CPU work, in stretches of one chunk (milliseconds), on the pool's
    /// threads rather than the cooperative pool the planner runs on.
    private static func build(_ source: Source) -> Task<Chunk, Never> {
        Task { (try? await BlockingPool.run { source.build() }) ?? Chunk(entities: [], error: CancellationError(), done: true) }
    }

    mutating func next() async throws -> TableEntity? {
        while position == current.count {
            if let failure { throw failure }
            guard let pending else { return nil }
            // Between chunks (512 entities): a cancelled plan (Ctrl-C) stops here.
            try Task.checkCancellation()
            let chunk = await pending.value
            self.pending = chunk.done ? nil : Self.build(source)
            current = chunk.entities
            position = 0
            failure = chunk.error
        }
        defer { position += 1 }
        return current[position]
    }
}
