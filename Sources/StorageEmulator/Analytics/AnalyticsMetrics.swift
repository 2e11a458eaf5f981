import Foundation
import StorageProtocol

/// One metrics row: a service, hour or minute, the period (`20261126T1600`), the row key
/// (`user;All`, or `user;GetBlob` with IncludeAPIs).
struct MetricsKey: Hashable, Sendable {
    enum Granularity: Sendable {
        case hour, minute
    }

    var service: EmulatorServiceKind
    var granularity: Granularity
    var period: String
    var rowKey: String

    /// Azure's table for a service and granularity, e.g. `$MetricsHourPrimaryTransactionsBlob`.
    static func table(_ service: EmulatorServiceKind, _ granularity: Granularity) -> String {
        "$Metrics\(granularity == .hour ? "Hour" : "Minute")PrimaryTransactions\(service == .blob ? "Blob" : "Table")"
    }

    var table: String { Self.table(service, granularity) }

    /// Whether `name` is one of the metrics tables (compared as Azure compares table names).
    static func isMetricsTable(_ name: String) -> Bool {
        // Every request names a table: most are not `$…`, and are told so at the first byte.
        guard name.utf8.first == UInt8(ascii: "$") else { return false }
        return [EmulatorServiceKind.blob, .table].contains { service in
            [Granularity.hour, .minute].contains { table(service, $0).lowercased() == name.lowercased() }
        }
    }

    /// `yyyyMMddTHHmm`, the minutes 00 for an hour.
    static func period(_ time: EdmDateTime, _ granularity: Granularity) -> String {
        let iso = Array(time.iso8601)
        let minute = granularity == .hour ? "00" : String(iso[14..<16])
        return String(iso[0..<4]) + String(iso[5..<7]) + String(iso[8..<10]) + "T" + String(iso[11..<13]) + minute
    }
}

/// The counts of one metrics row. Stored rows hold averages; merging a flush into a stored row
/// recovers the sums from them (average × requests).
struct MetricsCounts: Sendable, Equatable {
    var requests: Int64 = 0
    var ingress: Int64 = 0
    var egress: Int64 = 0
    var e2eSum: Double = 0
    var serverSum: Double = 0
    /// By outcome, then by authentication (authenticated, anonymous, sas).
    var counts: [String: Int64] = [:]

    static let outcomes = ["Success", "ThrottlingError", "ServerOtherError", "ClientOtherError", "AuthorizationError"]
    static let zeroOutcomes = ["ClientTimeoutError", "ServerTimeoutError", "NetworkError"]
    static let prefixes = ["", "Anonymous", "SAS"]

    /// Azure's name for what happened to a request (`Success`, `SASAuthorizationError`, …).
    static func requestStatus(_ status: Int, _ authentication: StorageAnalytics.Authentication) -> String {
        let outcome: String
        switch status {
        case ..<400: outcome = "Success"
        case 401, 403: outcome = "AuthorizationError"
        case 503: outcome = "ThrottlingError"
        case 500...: outcome = "ServerOtherError"
        default: outcome = "ClientOtherError"
        }
        switch authentication {
        case .authenticated: return outcome
        case .anonymous: return "Anonymous" + outcome
        case .sas: return "SAS" + outcome
        }
    }

    mutating func add(_ o: StorageAnalytics.Observation) {
        requests += 1
        ingress += Int64(o.requestBytes)
        egress += Int64(o.responseBytes)
        e2eSum += Double(o.milliseconds)
        serverSum += Double(o.milliseconds)
        counts[Self.requestStatus(o.status, o.authentication), default: 0] += 1
    }

    mutating func add(_ other: MetricsCounts) {
        requests += other.requests
        ingress += other.ingress
        egress += other.egress
        e2eSum += other.e2eSum
        serverSum += other.serverSum
        for (name, n) in other.counts { counts[name, default: 0] += n }
    }

    func count(_ outcome: String) -> Int64 { Self.prefixes.reduce(0) { $0 + (counts[$1 + outcome] ?? 0) } }

    /// The row as Azure's transaction metrics tables hold it.
    func entity(_ key: MetricsKey) -> TableEntity {
        var entity = TableEntity(partitionKey: key.period, rowKey: key.rowKey)
        let total = Double(max(requests, 1))
        entity["TotalRequests"] = .int64(requests)
        entity["TotalBillableRequests"] = .int64(requests - count("ThrottlingError") - count("ServerOtherError"))
        entity["TotalIngress"] = .int64(ingress)
        entity["TotalEgress"] = .int64(egress)
        entity["AverageE2ELatency"] = .double(e2eSum / total)
        entity["AverageServerLatency"] = .double(serverSum / total)
        entity["Availability"] = .double(100 * Double(requests - count("ThrottlingError") - count("ServerOtherError")) / total)
        entity["PercentSuccess"] = .double(100 * Double(count("Success")) / total)
        for outcome in Self.outcomes.dropFirst() + ["ClientTimeoutError", "NetworkError"] {
            let name = outcome == "ClientTimeoutError" ? "PercentTimeoutError" : "Percent" + outcome
            entity[name] = .double(100 * Double(count(outcome)) / total)
        }
        for outcome in Self.outcomes + Self.zeroOutcomes {
            for prefix in Self.prefixes { entity[prefix + outcome] = .int64(counts[prefix + outcome] ?? 0) }
        }
        return entity
    }

    /// The counts a stored row holds.
    init(_ entity: TableEntity) {
        func int(_ name: String) -> Int64 {
            switch entity[name] {
            case .int64(let v): v
            case .int32(let v): Int64(v)
            default: 0
            }
        }
        func double(_ name: String) -> Double {
            if case .double(let v) = entity[name] { return v }
            return 0
        }
        requests = int("TotalRequests")
        ingress = int("TotalIngress")
        egress = int("TotalEgress")
        e2eSum = double("AverageE2ELatency") * Double(requests)
        serverSum = double("AverageServerLatency") * Double(requests)
        for outcome in Self.outcomes {
            for prefix in Self.prefixes where int(prefix + outcome) > 0 { counts[prefix + outcome] = int(prefix + outcome) }
        }
    }

    init() {}
}

/// Writes metrics rows into the `$Metrics…` tables (made when first needed), merging with what
/// a row already holds.
struct MetricsWriter {
    let store: EmulatorStore

    func write(_ rows: [MetricsKey: MetricsCounts]) async throws {
        for (key, counts) in rows {
            if !(try await store.tableExists(key.table)) { try? await store.createTable(key.table) }
            var merged = counts
            if let stored = try? await store.entity(table: key.table, partitionKey: key.period, rowKey: key.rowKey) {
                merged.add(MetricsCounts(stored.entity))
            }
            _ = try await store.apply([.replace(merged.entity(key), ifMatch: nil)], table: key.table)
        }
    }

    /// Removes the rows of periods more than `days` old.
    func removeOlder(than days: Int, service: EmulatorServiceKind, granularity: MetricsKey.Granularity, now: EdmDateTime) async throws {
        let table = MetricsKey.table(service, granularity)
        guard try await store.tableExists(table) else { return }
        let cutoff = MetricsKey.period(EdmDateTime(ticks: now.ticks - Int64(days) * 864_000_000_000), granularity)
        while true {
            let rows = try await store.scanEntities(table: table, partition: nil, after: nil, limit: 1000)
            let old = rows.filter { $0.partitionKey.utf8.lexicographicallyPrecedes(cutoff.utf8) }
            guard !old.isEmpty else { return }
            _ = try await store.apply(old.map { .delete(partitionKey: $0.partitionKey, rowKey: $0.rowKey, ifMatch: "*") }, table: table)
        }
    }
}
