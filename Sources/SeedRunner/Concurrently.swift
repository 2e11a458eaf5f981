/// Runs `body` over `items` with at most `limit` calls in flight; the first error cancels
/// the rest and is rethrown.
func forEachConcurrently<Item: Sendable>(_ items: [Item], limit: Int, _ body: @escaping @Sendable (Item) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < items.count && next < limit {
            let item = items[next]
            group.addTask { try await body(item) }
            next += 1
        }
        while try await group.next() != nil {
            if next < items.count {
                let item = items[next]
                group.addTask { try await body(item) }
                next += 1
            }
        }
    }
}
