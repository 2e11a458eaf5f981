import AzureStorage
import Foundation
import SeedKit

/// A migration written in Swift, registered beside the YAML files (``Migrator/code``): a typed
/// transform of each entity of one table, and its inverse where there is one. It runs under the
/// same rules as a file — the ledger records it (its checksum from ``revision``), the lock and
/// its fencing hold, a stopped run resumes at its checkpoint, `undo` puts it back exactly or
/// refuses — because it becomes the same kind of step a file's operation does.
///
/// (Named so beside SeedKit's `Migration`, the value every migration — file or code — becomes.)
///
/// ```swift
/// struct Capitalize: EntityMigration {
///     let version = MigrationVersion("4")!
///     let description = "City names capitalized"
///     let revision = "1"
///     let table = "events"
///     func transform(_ entity: TableEntity) -> EntityTransform {
///         guard case .string(let city)? = entity["City"] else { return .keep }
///         var changed = entity
///         changed["City"] = .string(city.capitalized)
///         return .replace(changed)
///     }
/// }
/// ```
public protocol EntityMigration: Sendable {
    /// Its place among the files' versions (no file may have it too).
    var version: MigrationVersion { get }
    /// What it does, one line (as a file's `description:`).
    var description: String { get }
    /// Bumped whenever ``transform(_:)`` changes: the ledger's checksum is of the version, the
    /// description and this, so `validate` tells an applied migration whose code changed.
    var revision: String { get }
    /// The table it transforms.
    var table: String { get }
    /// An OData filter selecting the entities it sees (as a file's `where:`); nil for all.
    var filter: String? { get }
    /// Whether transforming its own result changes nothing more: then batches are written
    /// concurrently, unrecorded; otherwise each batch is recorded before it is written, so a
    /// stopped run never applies one twice. False unless said.
    var isIdempotent: Bool { get }
    /// What becomes of one entity: a pure function of it (no clock, no I/O), so a plan, a
    /// resumed run and a re-read after a concurrent update all agree.
    func transform(_ entity: TableEntity) -> EntityTransform
    /// The entity ``transform(_:)`` made `entity` from, if it did — nil when `entity` is not of
    /// the shape it makes. `undo` puts an entity back only when transforming the result gives
    /// exactly the entity there. Without one (the default) the migration cannot be undone.
    var inverse: (@Sendable (TableEntity) -> TableEntity?)? { get }
}

extension EntityMigration {
    public var filter: String? { nil }
    public var isIdempotent: Bool { false }
    public var inverse: (@Sendable (TableEntity) -> TableEntity?)? { nil }

    /// The migration every run works with (SeedKit's `Migration`), its filter read as a file's
    /// `where:` is.
    func migration() throws -> Migration {
        let transform = self.transform
        let name = "V\(version.text) (Swift)"
        let change = CustomChange(
            name: name, idempotent: isIdempotent,
            apply: { entity in
                switch transform(entity) {
                case .keep: return .unchanged
                case .replace(let changed): return changed == entity ? .unchanged : .replaced(changed)
                case .delete: return .deleted
                case .fail(let why): return .failed(why)
                }
            }, inverse: inverse)
        do {
            return Migration(
                version: version, description: description, revision: revision,
                step: try EntityStep.custom(table: table, filter: filter, change: change))
        } catch let error as GenerationError {
            throw RunError("migration \(version.text) (Swift): \(error.description)")
        }
    }
}

/// What an ``EntityMigration`` makes of one entity.
public enum EntityTransform: Sendable, Equatable {
    /// Left as it is.
    case keep
    /// Written in its place (a Replace); its keys must be the entity's.
    case replace(TableEntity)
    case delete
    /// It cannot be transformed: the run stops there, naming the entity and this reason.
    case fail(String)
}
