import AzureStorage
import Crypto
import Foundation

/// A change written in code (SeedRunner's `EntityMigration`): a pure function of the entity,
/// and the inverse where there is one. It runs as every entity step runs — batched, fenced,
/// resumed from its checkpoint, undone by the inverse only where applying the change to what
/// the inverse gives makes exactly the entity there.
public struct CustomChange: Sendable {
    /// What the change is called in plans and errors.
    public let name: String
    let apply: @Sendable (TableEntity) -> EntityOutcome
    let inverse: (@Sendable (TableEntity) -> TableEntity?)?
    let idempotent: Bool

    /// `apply`: what the change makes of an entity (`.replaced` with the same keys, `.deleted`,
    /// `.unchanged`, `.failed(why)`); `inverse`: the entity it made `entity` from, or nil;
    /// `idempotent`: applied to its own result it changes nothing more.
    public init(
        name: String, idempotent: Bool, apply: @escaping @Sendable (TableEntity) -> EntityOutcome,
        inverse: (@Sendable (TableEntity) -> TableEntity?)? = nil
    ) {
        self.name = name
        self.idempotent = idempotent
        self.apply = apply
        self.inverse = inverse
    }

    /// The outcome, its keys checked: code changes properties, never keys (rekey does that).
    func outcome(_ entity: TableEntity) -> EntityOutcome {
        let outcome = apply(entity)
        if case .replaced(let after) = outcome, !after.partitionKey.isExactly(entity.partitionKey) || !after.rowKey.isExactly(entity.rowKey) {
            return .failed("\(name) gave other keys; a migration in code changes properties, not keys")
        }
        if case .rekeyed = outcome { return .failed("\(name) gave other keys; a migration in code changes properties, not keys") }
        return outcome
    }
}

extension EntityStep {
    /// A step over `table` (the entities `filter`, an OData filter, selects) that `change` does:
    /// the filter is read as a file's `where:` is (a mistake is thrown before anything runs).
    public static func custom(table: String, filter: String?, change: CustomChange) throws -> EntityStep {
        if let problem = StorageNames.tableProblem(table) ?? ReservedNames.tableProblem(table) {
            throw GenerationError("\(change.name): table '\(Printable.escaped(table))': \(problem)")
        }
        var parsed: FilterExpression?
        if let filter {
            do { parsed = try FilterParser.parse(filter) } catch {
                throw GenerationError("\(change.name): the filter is not an OData filter the Table service accepts: \(error)")
            }
            guard parsed!.comparisonCount <= MigrationParser.maxComparisons else {
                throw GenerationError("\(change.name): the filter holds more than \(MigrationParser.maxComparisons) comparisons")
            }
        }
        return EntityStep(table: table, filterText: filter, filter: parsed, change: .custom(change))
    }
}

extension Migration {
    /// A migration made in code: one entity step, its checksum the SHA-256 of its version,
    /// description and `revision` (bump the revision when the code changes, as a file's bytes
    /// would), its script named `V<version>__<description>.swift`.
    public init(version: MigrationVersion, description: String, revision: String, step: EntityStep) {
        let script = "V\(version.text)__\(description.replacingOccurrences(of: " ", with: "_")).swift"
        let digest = SHA256.hash(data: Data("\(version.canonical)\u{0}\(description)\u{0}\(revision)".utf8))
        self.init(
            version: version, description: description, script: script, file: script, checksum: digest.map { String(format: "%02x", $0) }.joined(),
            operations: [.entities(step)])
    }
}
