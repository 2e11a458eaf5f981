import Foundation
import Logging

/// Settings shared by the Blob and Table clients.
public struct ClientConfiguration: Sendable {
    public var retry: RetryPolicy
    /// Waits between retries (tests pass one that returns at once).
    public var sleep: Sleeper
    /// The clock that dates (and so signs) requests.
    public var now: @Sendable () -> Date
    /// Random values in [0, 1) for retry jitter.
    public var jitter: @Sendable () -> Double
    /// `x-ms-version` of Blob requests.
    public var blobVersion: String
    /// `x-ms-version` of Table requests.
    public var tableVersion: String
    /// Per-partition backoff after throttled answers (shared by the clients that share this configuration).
    public var throttle = PartitionThrottle()
    /// Attempts, retries and throttled answers of the clients sharing this configuration.
    public var activity = RequestActivity()
    /// Where each attempt is logged, at `info` with ``RequestRecord/metadata``: by default
    /// nowhere; `--verbose` and `--log-file` inject one writing to a ``RequestLog``
    /// (``Logger/requests(_:label:)``), a program its own.
    public var logger: Logger = .silent
    /// Seconds without a byte sent or received before an attempt fails (`--timeout`). Such an
    /// attempt is not retried — a service that said nothing for that long is taken as down —
    /// and no retry of any request starts once ``retryWindow`` has passed since its first try.
    public var timeout = 10
    /// A PEM file of CA certificates trusted besides the system's (a private CA, an emulator's
    /// certificate); nil trusts the system's alone. The library reads no environment variable:
    /// the azseed CLI sets this from `--ca-file`, else `SSL_CERT_FILE`.
    public var trustedCertificates: String? = nil
    /// How long after its first attempt a request may still be retried: three timeouts.
    public var retryWindow: Duration { .seconds(3 * timeout) }

    public init(
        retry: RetryPolicy = .exponential,
        sleep: @escaping Sleeper = { try await Task.sleep(for: $0) },
        now: @escaping @Sendable () -> Date = { Date() },
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        blobVersion: String = "2023-11-03", tableVersion: String = "2019-02-02"
    ) {
        self.retry = retry
        self.sleep = sleep
        self.now = now
        self.jitter = jitter
        self.blobVersion = blobVersion
        self.tableVersion = tableVersion
    }
}
