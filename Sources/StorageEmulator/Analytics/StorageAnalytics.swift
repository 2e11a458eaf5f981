import Foundation
import StorageProtocol
import Synchronization

/// Storage Analytics, as switched on in Set Blob/Table Service Properties: logging writes one
/// entry per request to block blobs in `$logs` (`blob/YYYY/MM/DD/hh00/nnnnnn.log`, format 1.0 or
/// 2.0), hour and minute metrics keep per-period counts in the `$Metrics…` tables, and
/// retention removes what is older than its days. Entries are gathered in memory and written
/// every ``EmulatorConfiguration/analyticsFlushSeconds`` and when the server stops — by the
/// store, not through the service, so writing them is never itself logged.
final class StorageAnalytics: Sendable {
    /// One request, as logging and metrics see it.
    struct Observation: Sendable {
        var service: EmulatorServiceKind
        var operation: StorageOperation
        var status: Int
        var authentication: Authentication
        var start: EdmDateTime
        var milliseconds: Int
        var url: String
        var objectKey: String
        var requestID: String
        var client: String
        var version: String
        var requestBytes: Int
        var responseBytes: Int
        var contentMD5: String
        var etag: String
        var lastModified: String
        var conditions: String
        var userAgent: String
        var referrer: String
        var clientRequestID: String

        /// Roughly what its entry takes, in memory and in the log.
        var estimatedBytes: Int {
            256 + url.utf8.count + objectKey.utf8.count + userAgent.utf8.count + referrer.utf8.count + clientRequestID.utf8.count
                + conditions.utf8.count + version.utf8.count + contentMD5.utf8.count + etag.utf8.count
        }
    }

    enum Authentication: String, Sendable {
        case authenticated, sas, anonymous
    }

    private struct Pending {
        var settings: [EmulatorServiceKind: AnalyticsSettings] = [:]
        var logs: [EmulatorServiceKind: [Observation]] = [:]
        var metrics: [MetricsKey: MetricsCounts] = [:]
        var flushing = false
        /// What the entries waiting to be written hold, roughly, in bytes.
        var pendingBytes = 0
        var lastSweep: [EmulatorServiceKind: EdmDateTime] = [:]
    }

    let store: EmulatorStore
    let account: String
    let flushSeconds: Double
    private let state = Mutex(Pending())
    /// Whether any service has analytics on: the one check a request pays when none does.
    private let active = Atomic<Bool>(false)
    private let loaded = Atomic<Bool>(false)

    init(store: EmulatorStore, account: String, flushSeconds: Double) {
        self.store = store
        self.account = account
        self.flushSeconds = flushSeconds
    }

    /// Reads the services' settings (at start, and after a Set Service Properties).
    func reload() async {
        var settings: [EmulatorServiceKind: AnalyticsSettings] = [:]
        for service in [EmulatorServiceKind.blob, .table] {
            settings[service] = (try? await ServiceProperties.document(service, in: store)).map(AnalyticsSettings.init) ?? AnalyticsSettings()
        }
        state.withLock { $0.settings = settings }
        active.store(settings.values.contains { $0.isOn }, ordering: .relaxed)
        loaded.store(true, ordering: .relaxed)
    }

    /// Whether a request may need observing: checked without suspending, so a server with
    /// analytics off pays two atomic loads a request and nothing else.
    var mayObserve: Bool { !loaded.load(ordering: .relaxed) || active.load(ordering: .relaxed) }

    /// Takes one answered request; writes nothing itself (``flush()`` does).
    func observe(_ make: () -> Observation, service: EmulatorServiceKind) async {
        if !loaded.load(ordering: .relaxed) { await reload() }
        guard active.load(ordering: .relaxed) else { return }
        let observation = make()
        let full = state.withLock { pending -> Bool in
            guard let settings = pending.settings[service] else { return false }
            if let logging = settings.logging {
                let wanted: Bool
                switch observation.operation.category {
                case .read: wanted = logging.read
                case .write: wanted = logging.write
                case .delete: wanted = logging.delete
                }
                // Azure logs anonymous requests only when they succeed or the server failed.
                let anonymousNoise = observation.authentication == .anonymous && observation.status >= 400 && observation.status < 500
                if wanted && !anonymousNoise {
                    let size = observation.estimatedBytes
                    // Past twice the bound (a write is under way and more keeps coming): dropped.
                    if pending.pendingBytes + size <= Self.maxPendingBytes * 2 {
                        pending.logs[service, default: []].append(observation)
                        pending.pendingBytes += size
                    }
                }
            }
            for (granularity, metrics) in [(MetricsKey.Granularity.hour, settings.hour), (.minute, settings.minute)] {
                guard let metrics else { continue }
                let period = MetricsKey.period(observation.start, granularity)
                var apis = ["All"]
                if metrics.includeAPIs { apis.append(observation.operation.name) }
                for api in apis {
                    let key = MetricsKey(service: service, granularity: granularity, period: period, rowKey: "user;\(api)")
                    pending.metrics[key, default: MetricsCounts()].add(observation)
                }
            }
            return !pending.flushing
                && (pending.logs[service, default: []].count >= Self.maxPendingEntries || pending.pendingBytes >= Self.maxPendingBytes)
        }
        // A burst between flushes is written at once rather than held (memory stays bounded).
        if full { Task { await self.flush() } }
    }

    /// The most log entries held for a service before they are written.
    static let maxPendingEntries = 20_000
    /// Past this many bytes waiting, the entries are written at once; past twice as many (a
    /// write is under way and more keeps coming), new entries are dropped.
    static let maxPendingBytes = 32 << 20

    /// Runs until the task is cancelled, flushing every `flushSeconds`.
    func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(Int(flushSeconds * 1000)))
            // Cancelled (the server stops): the stopping server flushes, after this returns.
            guard !Task.isCancelled else { return }
            await flush()
        }
    }

    /// Writes what was gathered: log blobs, metrics rows; then applies retention (at most
    /// hourly per service).
    func flush() async {
        let taken = state.withLock {
            pending -> (
                logs: [EmulatorServiceKind: [Observation]], metrics: [MetricsKey: MetricsCounts], settings: [EmulatorServiceKind: AnalyticsSettings]
            )? in
            guard !pending.flushing else { return nil }
            pending.flushing = true
            defer {
                pending.logs = [:]
                pending.metrics = [:]
                pending.pendingBytes = 0
            }
            return (pending.logs, pending.metrics, pending.settings)
        }
        guard let taken else { return }
        defer { state.withLock { $0.flushing = false } }
        for (service, observations) in taken.logs where !observations.isEmpty {
            let version = taken.settings[service]?.logging?.version ?? "1.0"
            try? await AnalyticsLogWriter(store: store, account: account).write(observations, service: service, version: version)
        }
        if !taken.metrics.isEmpty { try? await MetricsWriter(store: store).write(taken.metrics) }
        let now = store.clock.now()
        for (service, settings) in taken.settings {
            let due = state.withLock { pending -> Bool in
                if let last = pending.lastSweep[service], now.ticks - last.ticks < 36_000_000_000 { return false }
                pending.lastSweep[service] = now
                return true
            }
            guard due else { continue }
            if let days = settings.logging?.retentionDays {
                try? await AnalyticsLogWriter(store: store, account: account).removeOlder(than: days, service: service, now: now)
            }
            for (granularity, metrics) in [(MetricsKey.Granularity.hour, settings.hour), (.minute, settings.minute)] {
                if let days = metrics?.retentionDays {
                    try? await MetricsWriter(store: store).removeOlder(than: days, service: service, granularity: granularity, now: now)
                }
            }
        }
    }
}
