import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// How `azseed migrate` prints plans, results and status, as text or one JSON document.
enum MigrationPrinting {
    /// Text from a migration file or the target's ledger, as the terminal gets it: control
    /// characters escaped, so neither can draw or forge lines (JSON escapes them itself).
    static func shown(_ text: String) -> String { Printable.escaped(text, quotes: false) }

    static func planText(_ reports: [MigrationReport], status: MigrationStatus, folder: URL, shard: Shard? = nil) -> String {
        guard !reports.isEmpty else {
            return "No pending migrations in \(folder.relativePathForMessages) (\(status.entries.count) known)."
        }
        var lines: [String] = []
        var changes = 0
        for report in reports {
            lines.append("V\(report.version) \(shown(report.description)) (\(report.state == "running" ? "interrupted: resumes" : report.state))")
            if let blocker = report.undoBlocker {
                lines.append("  (cannot be undone: \(blocker); 'azseed migrate apply --backup DIR' takes a snapshot first)")
            }
            for op in report.operations {
                changes += op.done ? 0 : op.changes
                lines += operationLines(op)
                if let warning = op.warning { lines.append("      warning: \(shown(warning))") }
                if let failure = op.firstFailure {
                    lines.append("      cannot change \(op.countedFailures), e.g. \(failure); apply would stop there")
                }
            }
        }
        lines.append("")
        lines.append(
            "Plan\(shard.map { " (shard \($0))" } ?? ""): \(reports.count) migration\(reports.count == 1 ? "" : "s") to apply, \(changes) change\(changes == 1 ? "" : "s")."
        )
        return lines.joined(separator: "\n")
    }

    static func appliedText(_ reports: [MigrationReport]) -> String {
        guard !reports.isEmpty else { return "No pending migrations: nothing to apply." }
        var lines: [String] = []
        for report in reports {
            lines.append("V\(report.version) \(shown(report.description)): \(report.state)")
            for op in report.operations { lines.append("  \(opLine(op))") }
        }
        lines.append("")
        let partly = reports.filter { $0.state != "applied" }.count
        lines.append(
            partly == 0
                ? "Applied \(reports.count) migration\(reports.count == 1 ? "" : "s")."
                : "Applied this shard's part of \(reports.count) migration\(reports.count == 1 ? "" : "s"); \(partly) wait\(partly == 1 ? "s" : "") for other shards."
        )
        return lines.joined(separator: "\n")
    }

    /// `migrate undo --dry-run`: the same lines as a plan, for the undo's steps.
    static func undoPlanText(_ reports: [MigrationReport]) -> String {
        var lines: [String] = []
        var changes = 0
        for report in reports {
            lines.append("V\(report.version) \(shown(report.description)) (\(report.state))")
            for op in report.operations {
                changes += op.done ? 0 : op.changes
                lines += operationLines(op)
            }
        }
        lines.append("")
        lines.append(
            "Undo: \(reports.count) migration\(reports.count == 1 ? "" : "s") to put back, \(changes) change\(changes == 1 ? "" : "s"). Run it without --dry-run to undo."
        )
        return lines.joined(separator: "\n")
    }

    static func undoneText(_ reports: [MigrationReport]) -> String {
        var lines: [String] = []
        for report in reports {
            lines.append("V\(report.version) \(shown(report.description)): undone")
            for op in report.operations { lines.append("  \(opLine(op))") }
        }
        lines.append("")
        lines.append(
            "Undid \(reports.count) migration\(reports.count == 1 ? "" : "s"); 'azseed migrate apply' applies \(reports.count == 1 ? "it" : "them") again."
        )
        return lines.joined(separator: "\n")
    }

    /// An operation's line and its samples, as a plan shows them.
    private static func operationLines(_ op: OperationReport) -> [String] {
        var lines = ["  \(opLine(op))"]
        for sample in op.samples {
            if op.isBlobOperation {
                lines += sample.lines.map { "      \($0)" }
                continue
            }
            lines.append("      (\(Printable.escaped(sample.partitionKey, quotes: false)), \(Printable.escaped(sample.rowKey, quotes: false)))")
            lines += sample.lines.map { "        \($0)" }
        }
        return lines
    }

    private static func opLine(_ op: OperationReport) -> String {
        let what: String
        switch op.op {
        case "create-table": what = op.changes == 1 ? "creates the table" : "the table exists"
        case "delete-table": what = op.changes == 1 ? "deletes the table" : "no such table"
        case _ where op.isBlobOperation: what = "\(op.changes) blob\(op.changes == 1 ? "" : "s")"
        default: what = "\(op.changes) entit\(op.changes == 1 ? "y" : "ies")"
        }
        let skipped = op.skipped > 0 ? " (\(op.skipped) left as they are: their value cannot be converted)" : ""
        return "\(op.op) \(op.table): \(what)\(skipped)\(op.done ? " (done before the interruption)" : "")"
    }

    /// `migrate lint`'s findings, one per line (`file:line: severity: message`), then a count.
    static func lintText(_ findings: [LintFinding]) -> String {
        let errors = findings.filter { $0.severity == .error }.count
        let lines = findings.map { shown($0.located(.flags)) }
        let summary =
            findings.isEmpty
            ? "No findings."
            : "\(errors) error\(errors == 1 ? "" : "s"), \(findings.count - errors) warning\(findings.count - errors == 1 ? "" : "s")."
        return (lines + [summary]).joined(separator: "\n")
    }

    /// `migrate lint --output json`: `{"errors": N, "warnings": N, "findings": [...]}`.
    static func json(_ findings: [LintFinding]) -> JSONValue {
        let errors = findings.filter { $0.severity == .error }.count
        return .object([
            ("errors", .number(String(errors))), ("warnings", .number(String(findings.count - errors))),
            (
                "findings",
                .array(
                    findings.map { finding in
                        var members: [(String, JSONValue)] = [("severity", .string(finding.severity.rawValue)), ("file", .string(finding.file))]
                        if let line = finding.line { members.append(("line", .number(String(line)))) }
                        members += [
                            ("version", .string(finding.version)), ("op", .string(finding.operation)), ("table", .string(finding.table)),
                            ("message", .string(finding.message.rendered(.flags))),
                        ]
                        return .object(members)
                    })
            ),
        ])
    }

    /// `migrate status` as `flyway info` shows it: one row per version — version, description,
    /// state, installed on, by, checksum (short), changes, duration — then a line per failure.
    static func statusText(_ status: MigrationStatus) -> String {
        guard !status.entries.isEmpty else { return "No migrations in the folder or the ledger." }
        // The description last: the columns a reader compares stay aligned whatever its length.
        var rows = [["VERSION", "STATE", "INSTALLED ON", "BY", "CHECKSUM", "CHANGES", "DURATION", "DESCRIPTION"]]
        var notes: [String] = []
        for entry in status.entries {
            var state = entry.state.rawValue
            if entry.state == .inShards, let count = entry.shards.first?.shard?.count {
                state += " (\(entry.shards.filter { $0.state == .applied }.count) of \(count) done)"
            }
            let checksum = String((entry.record?.checksum ?? entry.migration?.checksum ?? "").prefix(8))
            var row = [entry.version, state, "—", "—", checksum.isEmpty ? "—" : checksum, "—", "—", shown(entry.description)]
            if let record = entry.record {
                row[2] = installedOn(record.startedAt)
                row[3] = "\(shown(record.tool)) on \(shown(record.host))"
            }
            if let record = entry.record, record.state != .baseline {
                row[5] = String(record.counts.reduce(0) { $0.addingReportingOverflow($1).partialValue })
                if let ended = record.endedAt, [.applied, .undone].contains(record.state) { row[6] = duration(from: record.startedAt, to: ended) }
                if let error = record.error { notes.append("V\(entry.version) \(entry.state.rawValue): \(shown(error))") }
            }
            rows.append(row)
        }
        // A cell holds at most 40 characters (the description, last, is not padded): a ledger
        // value of 1,000 characters must not widen every row.
        rows = rows.map { row in
            row.enumerated().map { column, cell in column < row.count - 1 && cell.count > 40 ? String(cell.prefix(39)) + "…" : cell }
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            row.indices.map { row[$0] + String(repeating: " ", count: widths[$0] - row[$0].count) }.joined(separator: "  ")
                .replacing(/\s+$/, with: "")
        }
        lines += notes
        if let control = status.control, !control.isQuiet {
            lines.append("control: \(control.summary) — azseed migrate control resume|rate off undoes it")
        }
        if let problem = status.controlProblem { lines.append("control: \(problem); running applies ignore it") }
        return lines.joined(separator: "\n")
    }

    /// When a migration was installed, to the second: `2026-11-29 01:02:03Z`.
    static func installedOn(_ time: EdmDateTime) -> String {
        let short = time.shortISO8601
        return String(short.prefix(19)).replacingOccurrences(of: "T", with: " ") + "Z"
    }

    /// How long a run took, as a person reads it: `< 1 s`, `12 s`, `3 min 05 s`, `2 h 07 min`
    /// (the ledger records whole seconds).
    static func duration(from start: EdmDateTime, to end: EdmDateTime) -> String {
        let seconds = max(0, (end.ticks - start.ticks) / EdmDateTime.ticksPerSecond)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        if seconds < 1 { return "< 1 s" }
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min \(two(seconds % 60)) s" }
        return "\(seconds / 3600) h \(two(seconds % 3600 / 60)) min"
    }

    static func json(_ reports: [MigrationReport], shard: Shard? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = []
        if let shard { members.append(("shard", .string(shard.description))) }
        members.append(
            (
                "migrations",
                .array(
                    reports.map { report in
                        var fields: [(String, JSONValue)] = [
                            ("version", .string(report.version)), ("description", .string(report.description)), ("state", .string(report.state)),
                        ]
                        if report.state == "pending" || report.state == "running" || report.state == "undone" {
                            fields.append(("undoable", .bool(report.undoBlocker == nil)))
                        }
                        fields.append(("operations", .array(report.operations.map(operationJSON))))
                        if report.state.hasPrefix("applied") || report.state == "undone" {
                            fields.append(("retries", .number(String(report.retries))))
                            fields.append(("backoffSeconds", .number(String(format: "%.3f", report.backoffSeconds))))
                        }
                        return .object(fields)
                    })
            ))
        return .object(members)
    }

    /// What `migrate rehearse` copied, applied, undid and found.
    static func rehearsalText(_ r: MigrateRehearse.Result) -> String {
        guard !r.applied.isEmpty else { return "No pending migrations: nothing to rehearse." }
        let copied =
            r.tables.map { "table \($0.name) (\($0.entities) entit\($0.entities == 1 ? "y" : "ies"))" }
            + r.containers.map { "container \($0.name) (\($0.blobs) blob\($0.blobs == 1 ? "" : "s"))" }
        var lines = [
            "Rehearsed on \(r.sampled ? "a sample" : "a copy") of \(copied.isEmpty ? "nothing (no table or container they touch exists yet)" : copied.joined(separator: ", ")), in memory; the target was only read."
        ]
        for report in r.applied {
            lines.append(
                "V\(report.version) \(shown(report.description)): applied: \(report.operations.map { "\($0.op) \($0.changes)" }.joined(separator: ", "))"
            )
        }
        for report in r.undone {
            lines.append("V\(report.version) undone: \(report.operations.map { "\($0.op) \($0.changes)" }.joined(separator: ", "))")
        }
        if let refused = r.undoRefused {
            lines.append("Undo refused, so nothing was compared: \(refused.rendered(.flags))")
        } else if r.differenceCount == 0 {
            lines.append("Apply then undo gave back every entity and blob byte for byte.")
        } else {
            lines.append("\(r.differenceCount) differ after apply and undo:")
            lines += r.differences.map { "  \($0)" }
            if r.differenceCount > r.differences.count { lines.append("  … and \(r.differenceCount - r.differences.count) more") }
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ r: MigrateRehearse.Result) -> JSONValue {
        .object([
            ("sampled", .bool(r.sampled)),
            ("tables", .array(r.tables.map { .object([("name", .string($0.name)), ("entities", .number(String($0.entities)))]) })),
            ("containers", .array(r.containers.map { .object([("name", .string($0.name)), ("blobs", .number(String($0.blobs)))]) })),
            ("applied", json(r.applied)["migrations"] ?? .array([])), ("undone", json(r.undone)["migrations"] ?? .array([])),
            ("undoRefused", r.undoRefused.map { .string($0.rendered(.flags)) } ?? .null), ("exact", .bool(r.exact)),
            ("differences", .number(String(r.differenceCount))), ("firstDifferences", .array(r.differences.map(JSONValue.string))),
        ])
    }

    /// One progress event (``MigrationProgressLine``): a JSON line on stderr.
    static func json(_ p: MigrationProgress, retries: (retries: Int, throttled: Int)) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("event", .string("progress")), ("version", .string(p.version)), ("undoing", .bool(p.undoing)),
            ("operation", .number(String(p.operation))), ("operations", .number(String(p.operations))), ("op", .string(p.op)),
            ("target", .string(p.table)), ("phase", .string(p.phase.rawValue)), ("read", .number(String(p.read))),
            ("total", p.total.map { .number(String($0)) } ?? .null), ("changed", .number(String(p.changed))),
            ("percent", p.percent.map { .number(String(format: "%.1f", $0)) } ?? .null),
            ("ratePerSecond", .number(String(Int(p.rate)))), ("seconds", .number(String(format: "%.3f", p.seconds))),
            ("etaSeconds", p.etaSeconds.map { .number(String(format: "%.1f", $0)) } ?? .null),
            ("retries", .number(String(retries.retries))), ("throttled", .number(String(retries.throttled))),
        ]
        if p.phase == .finished || p.phase == .paused { members.removeAll { $0.0 == "etaSeconds" } }
        return .object(members)
    }

    private static func operationJSON(_ op: OperationReport) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("op", .string(op.op)), (op.isBlobOperation ? "container" : "table", .string(op.table)), ("changes", .number(String(op.changes))),
            ("deleted", .number(String(op.deleted))), ("failures", .number(String(op.failures))), ("skipped", .number(String(op.skipped))),
        ]
        if op.done { members.append(("done", .bool(true))) }
        if let failure = op.firstFailure { members.append(("firstFailure", .string(failure))) }
        if let warning = op.warning { members.append(("warning", .string(warning))) }
        if !op.samples.isEmpty {
            members.append(
                (
                    "samples",
                    .array(
                        op.samples.map {
                            op.isBlobOperation
                                ? .object([("blob", .string($0.rowKey)), ("changes", .array($0.lines.map(JSONValue.string)))])
                                : .object([
                                    ("partitionKey", .string($0.partitionKey)), ("rowKey", .string($0.rowKey)),
                                    ("changes", .array($0.lines.map(JSONValue.string))),
                                ])
                        })
                ))
        }
        return .object(members)
    }

    /// `migrations[]`, then `control` when `migrate control` asked something (or its record
    /// is damaged).
    static func json(_ status: MigrationStatus) -> JSONValue {
        guard case .object(var members) = migrationsJSON(status) else { return migrationsJSON(status) }
        if let control = status.control, !control.isQuiet || control.cancels > 0 { members.append(("control", json(control))) }
        if let problem = status.controlProblem { members.append(("control", .object([("problem", .string(problem))]))) }
        return .object(members)
    }

    /// `{state, maxRate, cancels, by, at}`: what `migrate control` last asked.
    static func json(_ control: MigrationControl) -> JSONValue {
        .object([
            ("state", .string(control.paused ? "paused" : "running")), ("maxRate", control.maxRate.map { .number(String($0)) } ?? .null),
            ("cancels", .number(String(control.cancels))), ("by", .string(control.by)), ("at", control.at.map { .string($0.iso8601) } ?? .null),
        ])
    }

    private static func migrationsJSON(_ status: MigrationStatus) -> JSONValue {
        .object([
            (
                "migrations",
                .array(
                    status.entries.map { entry in
                        var members: [(String, JSONValue)] = [
                            ("version", .string(entry.version)), ("description", .string(entry.description)),
                            ("state", .string(entry.state.rawValue)),
                        ]
                        if let migration = entry.migration {
                            members.append(("script", .string(migration.script)))
                            members.append(("checksum", .string(migration.checksum)))
                        }
                        if let record = entry.record {
                            members.append(("recordedChecksum", .string(record.checksum)))
                            members.append(("startedAt", .string(record.startedAt.iso8601)))
                            if let ended = record.endedAt { members.append(("endedAt", .string(ended.iso8601))) }
                            members.append(("tool", .string(record.tool)))
                            members.append(("host", .string(record.host)))
                            members.append(("counts", .array(record.counts.map { .number(String($0)) })))
                            if let applied = record.appliedCounts { members.append(("appliedCounts", .array(applied.map { .number(String($0)) }))) }
                            // Whether `migrate undo` can put it back: every operation invertible, and
                            // nothing found at apply time that undo could not tell apart.
                            if record.state == .applied {
                                let undoable = !record.undoChecks.isEmpty && record.undoChecks.allSatisfy { $0 == 0 }
                                members.append(("undoable", .bool(undoable)))
                            }
                            if let error = record.error { members.append(("error", .string(error))) }
                        }
                        return .object(members)
                    })
            )
        ])
    }
}

extension OperationReport {
    /// `3 entities`, `1 blob`: what the operation cannot change.
    var countedFailures: String {
        isBlobOperation ? "\(failures) blob\(failures == 1 ? "" : "s")" : "\(failures) entit\(failures == 1 ? "y" : "ies")"
    }
}
