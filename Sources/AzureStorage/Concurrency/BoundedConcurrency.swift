/// Runs the operations `next` hands out, at most `limit` at a time: `next` is asked for
/// another only when fewer than `limit` run, so work made on demand (a file read a block at a
/// time) is never made ahead of what may run. `nil` ends the stream; the first error cancels
/// the operations still running and is rethrown. The one "at most N in flight" loop of the
/// package: block uploads, ranged downloads, and the runner's per-item work.
package func withBoundedConcurrency(limit: Int, next: () async throws -> (@Sendable () async throws -> Void)?) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var inFlight = 0
        while true {
            while inFlight >= max(1, limit) {
                try await group.next()
                inFlight -= 1
            }
            guard let operation = try await next() else { break }
            group.addTask(operation: operation)
            inFlight += 1
        }
        try await group.waitForAll()
    }
}
