import Foundation

/// Builds a kind's entities on every core, a chunk per core at a time, and hands them on in
/// RowKey order on the caller's thread.
///
/// Each entity depends only on its identity and ordinal, so the entities, and the order
/// `body` sees them in, are those of one builder working alone. Each core has its own
/// builder (its own template cache). A build error stops the run where a lone builder would
/// have: `body` has had every entity before it.
enum ChunkedBuild {
    /// Entities built at a time by one of a round's slices.
    static let chunkSize = 512
    /// Slices a round holds per core: more slices than cores let a core that finished early
    /// take another, so one slow core does not hold the round.
    static let slicesPerCore = 4

    static func forEach(_ engine: KindEngine, identities: [Identity], _ body: (GeneratedEntity) throws -> Void) throws {
        let cores = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        guard cores > 1, identities.count > chunkSize else {
            var builder = EntityBuilder(engine: engine)
            for (ordinal, item) in identities.enumerated() {
                try body(try builder.build(identity: item.identity, ordinal: ordinal, index: item.index, rowKey: item.rowKey))
            }
            return
        }
        // A builder per slice: a slice runs once a round, so no builder is on two threads.
        let slices = cores * slicesPerCore
        var builders = (0..<slices).map { _ in EntityBuilder(engine: engine) }
        var chunks = [Chunk](repeating: Chunk(), count: slices)
        var start = 0
        while start < identities.count {
            let round = start
            builders.withUnsafeMutableBufferPointer { builders in
                chunks.withUnsafeMutableBufferPointer { chunks in
                    nonisolated(unsafe) let builders = builders
                    nonisolated(unsafe) let chunks = chunks
                    DispatchQueue.concurrentPerform(iterations: slices) { core in
                        let first = round + core * chunkSize
                        let end = min(identities.count, first + chunkSize)
                        chunks[core].entities.removeAll(keepingCapacity: true)
                        chunks[core].error = nil
                        var ordinal = first
                        while ordinal < end {
                            let item = identities[ordinal]
                            do {
                                chunks[core].entities.append(
                                    try builders[core].build(identity: item.identity, ordinal: ordinal, index: item.index, rowKey: item.rowKey))
                            } catch {
                                chunks[core].error = error
                                return
                            }
                            ordinal += 1
                        }
                    }
                }
            }
            for core in 0..<slices {
                // Borrowed from the chunk, not copied: a copy would count references the
                // builder's thread also counts.
                try chunks[core].entities.withUnsafeBufferPointer { made in
                    for i in made.indices { try body(made[i]) }
                }
                if let error = chunks[core].error { throw error }
            }
            start += slices * chunkSize
        }
    }

    private struct Chunk {
        var entities: [GeneratedEntity] = []
        var error: (any Error)?
    }
}
