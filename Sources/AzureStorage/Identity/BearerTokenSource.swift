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
    }

    public init(credential: any TokenCredential, scope: String = StorageScope.default, now: @escaping @Sendable () -> Date = { Date() }) {
        self.credential = credential
        self.scope = scope
        self.now = now
    }

    /// A token valid now, from the cache or the credential.
    public func token() async throws -> AccessToken {
        let current = now()
        let (cached, task): (AccessToken?, Task<AccessToken, Error>?) = state.withLock { state in
            if let token = state.token, token.refreshAt > current { return (token, nil) }
            if let pending = state.pending { return (state.token, pending) }
            let (credential, scope) = (self.credential, self.scope)
            let task = Task { try await credential.token(scope: scope) }
            state.pending = task
            return (state.token, task)
        }
        guard let task else { return cached! }
        do {
            let fresh = try await task.value
            state.withLock { state in
                state.token = fresh
                state.pending = nil
            }
            return fresh
        } catch {
            state.withLock { $0.pending = nil }
            // A refresh that fails early is no failure while the old token still works.
            if let cached, cached.expiresOn > current.addingTimeInterval(30) { return cached }
            throw error
        }
    }

    public static func == (a: BearerTokenSource, b: BearerTokenSource) -> Bool { a === b }
    public var description: String { "BearerTokenSource(\(credential.name))" }
}
