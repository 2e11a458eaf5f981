import Foundation
import Synchronization

/// Bearer tokens for one account's requests: a credential and its cache. A token is reused
/// until five minutes before it expires (or its `refreshOn`), then one request gets a new
/// one while the others wait for it; if getting it fails while the old token still works,
/// the old one is used. Equal only to itself.
public final class BearerTokenSource: Sendable, Equatable, CustomStringConvertible {
    public let credential: any TokenCredential
    public let scope: String
    let now: @Sendable () -> Date
    private let state = Mutex<State>(State())

    private struct State {
        var token: AccessToken?
        var pending: Task<AccessToken, Error>?
        /// Which fetch `pending` is, so only that fetch's waiters record its outcome.
        var generation = 0
        /// When a refresh last failed while the old token still worked: the next try waits
        /// ``retryAfterFailure`` (each try may start a process or a request).
        var failedAt: Date?
    }

    /// How long after a failed early refresh the cached token is used without trying again.
    static let retryAfterFailure: TimeInterval = 30

    public init(credential: any TokenCredential, scope: String = StorageScope.default, now: @escaping @Sendable () -> Date = { Date() }) {
        self.credential = credential
        self.scope = scope
        self.now = now
    }

    /// A token valid now, from the cache or the credential.
    public func token() async throws -> AccessToken {
        let current = now()
        let (cached, task, generation): (AccessToken?, Task<AccessToken, Error>?, Int) = state.withLock { state in
            if let token = state.token {
                if token.refreshAt > current { return (token, nil, 0) }
                if let failed = state.failedAt, current.timeIntervalSince(failed) < Self.retryAfterFailure,
                    token.expiresOn > current.addingTimeInterval(30)
                {
                    return (token, nil, 0)
                }
            }
            if let pending = state.pending { return (state.token, pending, state.generation) }
            let (credential, scope) = (self.credential, self.scope)
            let task = Task { try await credential.token(scope: scope) }
            state.generation += 1
            state.pending = task
            return (state.token, task, state.generation)
        }
        guard let task else { return cached! }
        do {
            let fresh = try await task.value
            state.withLock { state in
                guard state.generation == generation else { return }
                state.token = fresh
                state.pending = nil
                state.failedAt = nil
            }
            return fresh
        } catch {
            state.withLock { state in
                guard state.generation == generation else { return }
                state.pending = nil
                state.failedAt = current
            }
            // A refresh that fails early is no failure while the old token still works.
            if let cached, cached.expiresOn > current.addingTimeInterval(30) { return cached }
            throw error
        }
    }

    public static func == (a: BearerTokenSource, b: BearerTokenSource) -> Bool { a === b }
    public var description: String { "BearerTokenSource(\(credential.name))" }
}
