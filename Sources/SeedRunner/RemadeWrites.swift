import AzureStorage
import SeedKit

/// The entity writes of a plan made again as it is carried out (``Executor/execute(_:remaking:)``):
/// each action checked against the fingerprint the plan counted in its place, gathered into
/// batches of one partition (at most 100 operations, under the body limit), at most
/// `concurrency` batches in flight, and every batch of a kind finished before the next kind's
/// first (a referenced speaker exists before the events that point at it).
struct RemadeWrites {
    let executor: Executor
    let counter: ProgressCounter
    let checked: Bool
    private let expected: [Int]
    private var position = 0
    /// Entity actions per phase not yet taken, for the progress line.
    private var phaseItems: [PhaseKey: Int]
    private var phase: PhaseKey?
    /// The last action matched, for the line that names where another client wrote.
    private var lastMatched: EntityAction?
    private var batch: [TableBatchOperation] = []
    private var batchBytes = 0
    private var batchTable = ""
    private var batchPartition = ""
    private var inFlight = 0
    /// What was written: the plan's containers, blobs, tables and unchanged entities, and
    /// each entity action as it was made again.
    private(set) var written: PlanSummary
    private(set) var operations = 0

    init(plan: Plan, executor: Executor, counter: ProgressCounter) {
        self.executor = executor
        self.counter = counter
        checked = plan.entitiesChecked
        expected = plan.fingerprints.values
        var items: [PhaseKey: Int] = [:]
        for action in [plan.entities, plan.entityDeletes].joined() where action.change != .unchanged { items[PhaseKey(action), default: 0] += 1 }
        for counted in plan.countedEntities {
            items[PhaseKey(table: counted.table, kind: counted.kind, deletes: counted.change == .delete), default: 0] += counted.count
        }
        phaseItems = items
        var summary = PlanSummary()
        for c in plan.containers { summary.count(c.change) }
        for b in plan.blobs { summary.count(b.change) }
        for t in plan.tables { summary.count(t.change) }
        summary.unchanged += plan.unchangedEntities.values.reduce(0, +)
        written = summary
    }

    mutating func take(_ action: EntityAction, group: inout ThrowingTaskGroup<Int, any Error>) async throws {
        guard position < expected.count, expected[position] == ActionFingerprints.of(action) else {
            // Another client wrote here since the plan: what is in flight finishes (each was
            // checked), nothing after is written.
            try await drain(&group)
            throw Self.changedSincePlanned(action, after: lastMatched)
        }
        position += 1
        lastMatched = action
        written.count(action.change)
        guard let operation = EntityBatches.operation(action) else { return }  // recognised, unchanged
        operations += 1
        let key = PhaseKey(action)
        if key != phase {
            try await finishKind(group: &group)
            // What is left of the phase: two kinds may write under one name (a copied table).
            counter.begin(phase: key.name, items: phaseItems[key] ?? 0)
            phase = key
        }
        phaseItems[key, default: 1] -= 1
        let size = EntityBatches.estimatedSize(operation)
        if !batch.isEmpty
            && (!batchTable.isExactly(action.table) || !batchPartition.isExactly(action.partitionKey)
                || batch.count == TableBatchCodec.maxOperations || batchBytes + size > EntityBatches.bodyBudget)
        {
            try await send(&group)
        }
        if batch.isEmpty {
            batchTable = action.table
            batchPartition = action.partitionKey
        }
        batch.append(operation)
        batchBytes += size
    }

    /// Sends what is gathered, waits for every batch in flight and ends the phase's clock
    /// (the next kind's first action may come only after its partition is read).
    mutating func finishKind(group: inout ThrowingTaskGroup<Int, any Error>) async throws {
        try await send(&group)
        try await drain(&group)
        if phase != nil { counter.end() }
        phase = nil
    }

    /// The end of the remade plan: every counted action must have come.
    mutating func finish(group: inout ThrowingTaskGroup<Int, any Error>) async throws {
        try await finishKind(group: &group)
        guard position == expected.count else {
            throw RunError(
                "the target changed after the plan read it: \(expected.count - position) of the plan's entity actions were no longer there to make; what another client wrote was kept. Run again: the next plan starts from what is there now"
            )
        }
    }

    private mutating func send(_ group: inout ThrowingTaskGroup<Int, any Error>) async throws {
        guard !batch.isEmpty else { return }
        while inFlight >= executor.concurrency {
            if let n = try await group.next() { counter.add(n, bytes: 0) }
            inFlight -= 1
        }
        let (operations, table, checked, executor) = (batch, batchTable, checked, executor)
        group.addTask {
            try await executor.submit(operations, to: table, checked: checked)
            return operations.count
        }
        inFlight += 1
        batch = []
        batchBytes = 0
    }

    private mutating func drain(_ group: inout ThrowingTaskGroup<Int, any Error>) async throws {
        while let n = try await group.next() { counter.add(n, bytes: 0) }
        inFlight = 0
    }

    /// The line of a run whose plan, made again, met another client's write: it is after the
    /// last action that matched and at or before the one made in its place.
    static func changedSincePlanned(_ action: EntityAction, after last: EntityAction?) -> RunError {
        func place(_ a: EntityAction) -> String {
            "(PartitionKey '\(Printable.escaped(a.partitionKey, quotes: false))', RowKey '\(Printable.escaped(a.rowKey, quotes: false))')"
        }
        let after = last.map { " after \(place($0))\($0.table.isExactly(action.table) ? "" : " of table '\($0.table)'")" } ?? ""
        return RunError(
            "table '\(action.table)', an entity \(after.isEmpty ? "" : "\(after.dropFirst()) and ")at or before \(place(action)) was written by someone else after the plan read it; it was kept as they wrote it, and nothing after it was written. Run again: the next plan starts from what is there now"
        )
    }
}
