import AzureStorage
import Foundation
import SeedKit

/// `migrate plan`'s dry run: each operation counted against the target as the operations
/// before it would leave it. Tables created or deleted are tracked by name; an entity
/// operation reads its table and runs every earlier entity step on that table over each
/// entity first, in memory. Writes nothing.
struct MigrationSimulation {
    let tables: TableClient
    let observer: any RunObserver
    /// Tables that would exist, by their lowercased name (Azure's table names ignore case),
    /// and whether the target holds them now (else their entities are none).
    private var exists: [String: Bool]
    /// Entity steps earlier in the plan, per table.
    private var earlier: [String: [EntityStep]] = [:]

    init(tables: TableClient, observer: any RunObserver) async throws {
        self.tables = tables
        self.observer = observer
        var exists: [String: Bool] = [:]
        do {
            for name in try await tables.listTables() { exists[name.lowercased()] = true }
        } catch {
            throw RunError.explaining(error, while: "listing the target's tables")
        }
        self.exists = exists
    }

    mutating func plan(_ entry: MigrationStatus.Entry) async throws -> MigrationReport {
        let migration = entry.migration!
        let resumeAt = entry.state == .running ? (entry.record?.checkpoint?.operation ?? 0) : 0
        var report = MigrationReport(version: migration.version.text, description: migration.description, state: entry.state.rawValue, operations: [])
        for (i, operation) in migration.operations.enumerated() {
            var counted = OperationReport(op: operation.name, table: operation.table)
            let key = operation.table.lowercased()
            if i < resumeAt {
                counted.done = true
                counted.changes = entry.record?.counts[safe: i] ?? 0
                report.operations.append(counted)
                if case .entities(let step) = operation { earlier[key, default: []].append(step) }
                continue
            }
            switch operation {
            case .createTable:
                if exists[key] == nil {
                    counted.changes = 1
                    exists[key] = false
                }
            case .deleteTable:
                if exists[key] != nil {
                    counted.changes = 1
                    exists[key] = nil
                    earlier[key] = []
                }
            case .entities(let step):
                guard let held = exists[key] else {
                    throw RunError(
                        "migration \(migration.version.text), operation \(i + 1) (\(step.change.name)): table \(step.table) does not exist, and no operation before it creates it; name the right table or add create-table"
                    )
                }
                if held { try await count(step, into: &counted) }
                earlier[key, default: []].append(step)
            }
            report.operations.append(counted)
        }
        return report
    }

    /// Reads the table (only what `where:` selects when no earlier step changes it) and counts
    /// what the step would change.
    private func count(_ step: EntityStep, into counted: inout OperationReport) async throws {
        let before = earlier[step.table.lowercased()] ?? []
        let filter = before.isEmpty ? step.filterText.map { TableFilter.written($0, comparisons: step.filterComparisons) } : nil
        var read = 0
        do {
            for try await page in tables.query(step.table, filter: filter, fullMetadata: true) {
                read += page.count
                observer.reading(read)
                entities: for queried in page {
                    var entity = queried.entity
                    for earlierStep in before where earlierStep.selects(entity) {
                        switch earlierStep.change.apply(to: entity) {
                        case .replaced(let changed): entity = changed
                        case .deleted: continue entities
                        case .unchanged, .failed: break
                        }
                    }
                    guard step.selects(entity) else { continue }
                    let outcome = step.change.apply(to: entity)
                    switch outcome {
                    case .unchanged: continue
                    case .failed(let why):
                        counted.failures += 1
                        if counted.firstFailure == nil { counted.firstFailure = "entity (\(EntityStepRun.shown(entity))): \(why)" }
                    case .replaced, .deleted:
                        counted.changes += 1
                        if case .deleted = outcome { counted.deleted += 1 }
                        if counted.samples.count < OperationReport.maxSamples { counted.samples.append(EntityDiff(before: entity, outcome: outcome)) }
                    }
                }
            }
        } catch {
            throw RunError.explaining(error, while: "reading table \(step.table)")
        }
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
