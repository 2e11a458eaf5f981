/// Serialises work per key across tasks, without blocking a thread: a waiter suspends until
/// the holder of its key is done. Appends to one blob take their turn through it, as Azure
/// takes them one after another.
actor KeyedLock {
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// Runs `body` while holding `key`.
    nonisolated func withLock<T: Sendable>(_ key: String, _ body: () async throws -> T) async throws -> T {
        await acquire(key)
        do {
            let result = try await body()
            await release(key)
            return result
        } catch {
            await release(key)
            throw error
        }
    }

    private func acquire(_ key: String) async {
        if waiting[key] == nil {
            waiting[key] = []
            return
        }
        await withCheckedContinuation { waiting[key]!.append($0) }
    }

    private func release(_ key: String) {
        guard var queue = waiting[key] else { return }
        if queue.isEmpty {
            waiting[key] = nil
        } else {
            let next = queue.removeFirst()
            waiting[key] = queue
            next.resume()
        }
    }
}
