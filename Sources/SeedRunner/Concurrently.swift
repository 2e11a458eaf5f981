import AzureStorage

/// Runs `body` over `items` with at most `limit` calls in flight; the first error cancels
/// the rest and is rethrown (``withBoundedConcurrency(limit:next:)``).
func forEachConcurrently<Item: Sendable>(_ items: [Item], limit: Int, _ body: @escaping @Sendable (Item) async throws -> Void) async throws {
    var next = 0
    try await withBoundedConcurrency(limit: limit) {
        guard next < items.count else { return nil }
        let item = items[next]
        next += 1
        return { try await body(item) }
    }
}
