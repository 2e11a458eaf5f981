import AzureStorage

/// What `azseed migrate lint` says about one operation of a migration file (Atlas's `migrate
/// lint` is the model): an error — an operation that destroys data without saying so in its own
/// mapping — makes lint exit 1 and `plan`/`apply` refuse; a warning does not.
public struct LintFinding: Sendable, Equatable {
    public enum Severity: String, Sendable {
        case error, warning
    }

    public var severity: Severity
    /// The file, as messages show it, and the operation's line in it.
    public var file: String
    public var line: Int?
    public var version: String
    /// The operation's name (`remove-property`) and its table or container.
    public var operation: String
    public var table: String
    /// What was found and what to do, one line, naming settings for the program to spell.
    public var message: Phrase

    public init(
        severity: Severity, file: String, line: Int?, version: String, operation: String, table: String, message: Phrase
    ) {
        self.severity = severity
        self.file = file
        self.line = line
        self.version = version
        self.operation = operation
        self.table = table
        self.message = message
    }

    /// `file:line: severity: message`, as compilers and linters print a finding, each setting
    /// spelled by `names`.
    public func located(_ names: SettingNames) -> String {
        "\(file)\(line.map { ":\($0)" } ?? ""): \(severity.rawValue): \(message.rendered(names))"
    }
}

extension MigrationOperation {
    /// What this operation destroys, when it destroys something no later operation can give
    /// back from the account itself: deleted tables, entities and blobs, removed properties,
    /// values a retype removes, entities a rekey replaces under new keys. Nil otherwise.
    public var destroys: String? {
        switch self {
        case .deleteTable(let table): return "deletes table \(table) and every entity in it"
        case .blobs(let step):
            guard case .delete = step.change else { return nil }
            return "deletes the blobs of \(step.container) under '\(Printable.escaped(step.prefix, quotes: false))'"
        case .entities(let step):
            switch step.change {
            case .removeProperty(let name): return "removes property \(name) from the entities of \(step.table) it selects"
            case .deleteEntities: return "deletes the entities of \(step.table) it selects"
            case .retypeProperty(let name, _, .remove): return "removes \(name) from the entities of \(step.table) whose value it cannot convert"
            case .rekey: return "replaces each entity of \(step.table) it selects with one under new keys; readers of the old keys find nothing"
            case .mapValues(let name, let map) where !map.isInjective:
                return "maps several values of \(name) to one in \(step.table); which each was cannot be told again"
            default: return nil
            }
        case .createTable, .copyTable: return nil
        }
    }
}

extension Migration {
    /// What lint finds in this file alone: each destructive operation not acknowledged in its
    /// own mapping (an error — or, for a migration `applied` already, a warning: what it
    /// destroyed is history), and each operation `migrate undo` cannot put back (a warning).
    public func lintFindings(applied: Bool = false) -> [LintFinding] {
        var findings: [LintFinding] = []
        for (index, operation) in operations.enumerated() {
            let source = source(of: index)
            func finding(_ severity: LintFinding.Severity, _ message: Phrase) -> LintFinding {
                LintFinding(
                    severity: severity, file: file, line: source.line, version: version.canonical, operation: operation.name, table: operation.table,
                    message: "\(operation.name) \(operation.table): \(message)")
            }
            if let destroys = operation.destroys, !source.allowsDestructive {
                findings.append(
                    applied
                        ? finding(.warning, "\(destroys) (applied already: nothing to acknowledge)")
                        : finding(.error, "\(destroys); acknowledge it with 'allow-destructive: true' in its mapping"))
            }
            if !operation.isInvertible {
                findings.append(finding(.warning, "migrate undo cannot put it back exactly; take a snapshot first (apply's \(Setting.backupFolder))"))
            }
        }
        return findings
    }

    /// The first operation that destroys data without `allow-destructive: true` in its mapping:
    /// `plan` and `apply` refuse the migration, before any write.
    public var firstUnacknowledgedDestructive: LintFinding? {
        lintFindings().first { $0.severity == .error }
    }
}
