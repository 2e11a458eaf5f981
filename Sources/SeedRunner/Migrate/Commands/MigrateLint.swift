import AzureStorage
import Foundation
import SeedKit

/// `migrate lint` (Atlas's `migrate lint` is the model): what each migration file does that a
/// reviewer should see before it runs — operations that destroy data without saying so in their
/// own mapping (errors: `plan` and `apply` refuse them), operations `migrate undo` cannot put
/// back (warnings) — and, for the migrations still to run, `where` filters that match nothing
/// the table holds now (warnings). Reads the target; writes nothing, and takes no lock.
public struct MigrateLint: Sendable {
    public let migrator: Migrator

    public init(_ migrator: Migrator) { self.migrator = migrator }

    /// Pages of a filter that matches nothing that lint reads before it stops looking (Azure
    /// may answer a query over a large table with empty pages and a continuation).
    static let maxProbePages = 20

    /// Every finding, in file and line order.
    public func run() async throws -> [LintFinding] {
        let files = try await migrator.load()
        let (history, probed) = try await migrator.session { session in
            let status = try await Ledger(tables: session.run.tables).status(of: files)
            // Only what ran (or counts as run) is history; anything else may still run.
            let history = status.entries.filter { [.applied, .belowBaseline].contains($0.state) }.compactMap { $0.migration?.version.canonical }
            return (Set(history), try await Self.filterFindings(status.runnable.compactMap(\.migration), tables: session.run.tables))
        }
        var findings = files.migrations.flatMap { $0.lintFindings(applied: history.contains($0.version.canonical)) }
        findings += probed
        let order = Dictionary(files.migrations.enumerated().map { ($0.element.version.canonical, $0.offset) }, uniquingKeysWith: { a, _ in a })
        // Sorted by file, line, errors first; found order otherwise (a stable sort).
        return findings.enumerated().sorted { x, y in
            let (a, b) = (x.element, y.element)
            return (order[a.version] ?? 0, a.line ?? 0, a.severity == .error ? 0 : 1, x.offset)
                < (order[b.version] ?? 0, b.line ?? 0, b.severity == .error ? 0 : 1, y.offset)
        }.map(\.element)
    }

    /// The `where` of each entity step still to run that matches no entity of its table now.
    /// A table an earlier operation still to run writes (or creates) is not judged: what it will
    /// hold then is not what it holds now.
    static func filterFindings(_ pending: [Migration], tables: TableClient) async throws -> [LintFinding] {
        var findings: [LintFinding] = []
        var written: Set<String> = []
        for migration in pending {
            for (index, operation) in migration.operations.enumerated() {
                defer {
                    written.insert(operation.table.lowercased())
                    if case .copyTable(_, let to) = operation { written.insert(to.lowercased()) }
                }
                // A table an operation reads from (a lookup's, a copy's source) that is not there:
                // plan and apply refuse it, so lint does.
                let readFrom: String? =
                    if case .entities(let step) = operation { step.lookup?.fromTable } else if case .copyTable(let from, _) = operation { from } else
                    { nil }
                if let readFrom, !written.contains(readFrom.lowercased()), !(try await tables.tableExists(readFrom)) {
                    findings.append(
                        LintFinding(
                            severity: .error, file: migration.file, line: migration.source(of: index).line, version: migration.version.canonical,
                            operation: operation.name, table: operation.table,
                            message:
                                "\(operation.name) \(operation.table): table \(readFrom), which it reads, does not exist, and no operation before it creates it; name the right table"
                        ))
                }
                guard case .entities(let step) = operation, let text = step.filterText, !written.contains(step.table.lowercased()) else { continue }
                let filter = TableFilter.written("(\(text))", comparisons: step.filterComparisons)
                let message: Phrase
                var severity = LintFinding.Severity.warning
                switch try await probe(step.table, filter: filter, tables: tables) {
                case .some, .undecided: continue
                case .none:
                    let hints = try await selectionHints(step, tables: tables)
                    message = "where matches no entity of table \(step.table) now\(hints.isEmpty ? "" : ": " + hints.joined(separator: "; "))"
                case .noTable:
                    // What plan and apply refuse is an error here too.
                    severity = .error
                    message = "table \(step.table) does not exist, and no operation before it creates it; name the right table or add create-table"
                }
                findings.append(
                    LintFinding(
                        severity: severity, file: migration.file, line: migration.source(of: index).line, version: migration.version.canonical,
                        operation: operation.name, table: operation.table, message: "\(operation.name) \(operation.table): \(message)"))
            }
        }
        return findings
    }

    enum Probe { case some, none, noTable, undecided }

    /// Entities lint reads to say why a filter matches nothing (as `plan` says it).
    static let maxHintEntities = 500

    /// What in `step`'s filter cannot match, from the types the table's first entities hold.
    static func selectionHints(_ step: EntityStep, tables: TableClient) async throws -> [String] {
        var seen: [String: Set<EdmType>] = ["PartitionKey": [.string], "RowKey": [.string]]
        var read = 0
        reading: for try await page in tables.query(step.table, top: 100) {
            for queried in page {
                for (name, value) in queried.entity.properties { seen[name, default: []].insert(value.type) }
                read += 1
                if read >= maxHintEntities { break reading }
            }
        }
        return step.selectionHints(seen: seen)
    }

    /// Whether `filter` matches an entity of `table`, reading at most ``maxProbePages`` pages of
    /// one key each.
    static func probe(_ table: String, filter: TableFilter, tables: TableClient) async throws -> Probe {
        do {
            var pages = 0
            for try await page in tables.query(table, filter: filter, select: ["PartitionKey", "RowKey"], top: 1) {
                if !page.isEmpty { return .some }
                pages += 1
                if pages == maxProbePages { return .undecided }
            }
            return .none
        } catch let error as AzureStorageError where error.status == 404 {
            return .noTable
        }
    }
}

extension Migrator {
    /// `migrate lint`: ``MigrateLint``.
    public func lint() async throws -> [LintFinding] {
        try await MigrateLint(self).run()
    }

    /// `plan` and `apply` refuse a migration with an operation that destroys data and does not
    /// say so in its own mapping (`allow-destructive: true`), before anything is written.
    static func checkAcknowledged(_ chosen: [MigrationStatus.Entry]) throws {
        for entry in chosen {
            guard let migration = entry.migration, let finding = migration.firstUnacknowledgedDestructive else { continue }
            let place = Printable.escaped(migration.script, quotes: false) + (finding.line.map { ", line \($0)" } ?? "")
            throw RunError(
                "migration \(migration.version.canonical) (\(place)): \(finding.message) (\(Setting.migrateLint) lists every finding); nothing was written"
            )
        }
    }
}
