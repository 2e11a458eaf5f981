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
        let counts = activity.snapshot
        (requests, retries, throttled) = (counts.requests, counts.retries, counts.throttled)
    }

    package func json() -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("command", .string(command)),
            ("target", target.json()),
            ("shard", shard.map { .string($0.description) } ?? .null),
        ]
        if let plan { members += Self.changes(plan) }
        if let report {
            members.append(
                (
                    "blobBytes",
                    .object([
                        ("sent", Self.number(report.blobBytesSent)),
                        ("copiedServerSide", Self.number(report.blobBytesCopiedServerSide)),
                    ])
                ))
            members.append(
                (
                    "phases",
                    .array(
                        report.phases.map { phase in
                            .object([("name", .string(phase.name)), ("items", Self.number(phase.items)), ("seconds", Self.seconds(phase.seconds))])
                        })
                ))
        }
        members += extra
        members += [
            ("seconds", Self.seconds(seconds)), ("requests", Self.number(requests)), ("retries", Self.number(retries)),
            ("throttled", Self.number(throttled)),
        ]
        return .object(members)
    }

    /// `changes` (the plan's summary), `containers`, `blobs`, `tables` and `entities` (per
    /// table and kind) counted by action, and the entities left unchanged per table.
    static func changes(_ plan: Plan) -> [(String, JSONValue)] {
        let s = plan.summary
        var blobs = PlanSummary()
        var containers = PlanSummary()
        var tables = PlanSummary()
        for c in plan.containers { containers.count(c.change) }
        for b in plan.blobs { blobs.count(b.change) }
        for t in plan.tables { tables.count(t.change) }
        var kinds: [(table: String, kind: String?, counts: PlanSummary)] = []
        // Held actions one by one, and those a large plan only counted (PlanRetention).
        let held = [plan.entities, plan.entityDeletes].joined().lazy.map { (table: $0.table, kind: $0.kind, change: $0.change, n: 1) }
        let counted = plan.countedEntities.lazy.map { (table: $0.table, kind: $0.kind, change: $0.change, n: $0.count) }
        for e in [AnySequence(held), AnySequence(counted)].joined() {
            // Table and kind names matched by their bytes, as everywhere names are matched; no kind
            // (a snapshot's or a copied table) as NUL, which no kind name holds.
            let i =
                kinds.firstIndex(where: { $0.table.isExactly(e.table) && ($0.kind ?? "\u{0}").isExactly(e.kind ?? "\u{0}") })
                ?? {
                    kinds.append((e.table, e.kind, PlanSummary()))
                    return kinds.count - 1
                }()
            kinds[i].counts.count(e.change, e.n)
        }
        // Left as they were: those matched by RowKey (counted), and those recognised by their
        // natural key under a foreign RowKey (listed, as `=` in the text plan).
        var unchanged = plan.unchangedEntities
        for e in plan.entities where e.change == .unchanged { unchanged[e.table, default: 0] += 1 }
        return [
            ("changes", members(s)),
            ("containers", members(containers)),
            ("blobs", members(blobs)),
            ("tables", members(tables)),
            // Only the actions: the plan counts unchanged entities per table, not per kind
            // (it does not keep them), so they are in `unchangedEntities`.
            (
                "entities",
                .array(
                    kinds.map { item in
                        .object([
                            ("table", .string(item.table)), ("kind", item.kind.map { .string($0) } ?? .null),
                            ("create", number(item.counts.create)), ("update", number(item.counts.update)), ("delete", number(item.counts.delete)),
                        ])
                    })
            ),
            ("unchangedEntities", .object(unchanged.sorted { $0.key.byteOrder($1.key) < 0 }.map { ($0.key, number($0.value)) })),
        ]
    }

    /// `create`, `update`, `delete`, `unchanged`.
    static func members(_ s: PlanSummary) -> JSONValue {
        .object([("create", number(s.create)), ("update", number(s.update)), ("delete", number(s.delete)), ("unchanged", number(s.unchanged))])
    }

    static func number(_ n: Int) -> JSONValue { .number(String(n)) }
    static func seconds(_ s: Double) -> JSONValue { .number(String(format: "%.3f", s)) }
}
