import AzureStorage
import Foundation
import SeedKit

/// What a storage command did, as `--output json` prints it: one JSON object with stable field
/// names (README, "Machine-readable results"). For `apply`, `import`, `copy` and `reset` the
/// changes carried out; for `verify` the drift found; for `export` what was written.
public struct RunResult: Sendable {
    public var command: String
    public var target: PlanTarget
    public var shard: Shard?
    public var seconds: Double
    /// Attempts sent, retries among them and throttled answers (the run's ``RequestActivity``).
    public var requests = 0, retries = 0, throttled = 0
    /// The plan carried out (or, for verify, compared); nil for export.
    public var plan: Plan?
    public var report: ExecutionReport?
    /// Command-specific members, appended after the common ones.
    package var extra: [(String, JSONValue)] = []

    public init(command: String, target: PlanTarget, shard: Shard?, seconds: Double, activity: RequestActivity) {
        self.command = command
        self.target = target
        self.shard = shard
        self.seconds = seconds
        (requests, retries, throttled) = activity.snapshot
    }

    package func json() -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("command", .string(command)),
            ("target", target.json()),
            ("shard", shard.map { .string($0.description) } ?? .null),
        ]
        if let plan { members += Self.changes(plan) }
        if let report {
            members.append(("blobBytes", .object([("sent", Self.number(report.blobBytesSent)),
                                                  ("copiedServerSide", Self.number(report.blobBytesCopiedServerSide))])))
            members.append(("phases", .array(report.phases.map { phase in
                .object([("name", .string(phase.name)), ("items", Self.number(phase.items)), ("seconds", Self.seconds(phase.seconds))])
            })))
        }
        members += extra
        members += [("seconds", Self.seconds(seconds)), ("requests", Self.number(requests)), ("retries", Self.number(retries)),
                    ("throttled", Self.number(throttled))]
        return .object(members)
    }

    /// `changes` (the plan's summary), `containers`, `blobs`, `tables` and `entities` (per
    /// table and kind) counted by action, and the entities left unchanged per table.
    static func changes(_ plan: Plan) -> [(String, JSONValue)] {
        let s = plan.summary
        var blobs = Counts(), containers = Counts(), tables = Counts()
        for c in plan.containers { containers.add(c.change) }
        for b in plan.blobs { blobs.add(b.change) }
        for t in plan.tables { tables.add(t.change) }
        var kinds: [(table: String, kind: String?, counts: Counts)] = []
        for e in [plan.entities, plan.entityDeletes].joined() {
            if let i = kinds.firstIndex(where: { $0.table == e.table && $0.kind == e.kind }) {
                kinds[i].counts.add(e.change)
            } else {
                var counts = Counts()
                counts.add(e.change)
                kinds.append((e.table, e.kind, counts))
            }
        }
        return [
            ("changes", Counts(create: s.create, update: s.update, delete: s.delete, unchanged: s.unchanged).json),
            ("containers", containers.json),
            ("blobs", blobs.json),
            ("tables", tables.json),
            ("entities", .array(kinds.map { item in
                .object([("table", .string(item.table)), ("kind", item.kind.map { .string($0) } ?? .null)] + item.counts.members)
            })),
            ("unchangedEntities", .object(plan.unchangedEntities.sorted { $0.key < $1.key }.map { ($0.key, number($0.value)) })),
        ]
    }

    struct Counts {
        var create = 0, update = 0, delete = 0, unchanged = 0

        mutating func add(_ change: PlanChange) {
            switch change {
            case .create: create += 1
            case .update: update += 1
            case .delete: delete += 1
            case .unchanged: unchanged += 1
            }
        }

        var members: [(String, JSONValue)] {
            [("create", number(create)), ("update", number(update)), ("delete", number(delete)), ("unchanged", number(unchanged))]
        }

        var json: JSONValue { .object(members) }
    }

    static func number(_ n: Int) -> JSONValue { .number(String(n)) }
    static func seconds(_ s: Double) -> JSONValue { .number(String(format: "%.3f", s)) }
}
