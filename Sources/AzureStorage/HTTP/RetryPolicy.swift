import Foundation

/// When and how long to wait before retrying a transient failure: exponential backoff with
/// full jitter, capped, honouring the server's `Retry-After`.
public struct RetryPolicy: Sendable {
    /// Retries after the first attempt (0: never retry).
    public var maxRetries: Int
    public var initialDelay: Duration
    public var maxDelay: Duration
    /// The fraction of each delay that is randomised (0…1).
    public var jitter: Double

    public init(maxRetries: Int = 5, initialDelay: Duration = .milliseconds(200), maxDelay: Duration = .seconds(30), jitter: Double = 0.5) {
        self.maxRetries = maxRetries
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.jitter = jitter
    }

    public static let exponential = RetryPolicy()
    public static let noRetry = RetryPolicy(maxRetries: 0)

    /// The wait before retry number `attempt` (1-based). `Retry-After` (seconds), when the
    /// server sends it, wins over the computed backoff; `unit` is a random value in [0, 1).
    public func delay(attempt: Int, retryAfter: String?, unit: Double) -> Duration {
        if let retryAfter, let seconds = Double(retryAfter.trimmingCharacters(in: .whitespaces)), seconds >= 0 {
            return min(.milliseconds(Int64(seconds * 1000)), maxDelay)
        }
        let base = initialDelay * Int(1 << min(attempt - 1, 20))
        let capped = min(base, maxDelay)
        let scale = 1 - jitter + jitter * unit
        return capped * scale
    }
}

/// Waits; injected so tests do not sleep.
public typealias Sleeper = @Sendable (Duration) async throws -> Void
