import AzureStorage
import SeedKit
import SeedRunner

/// A migration the app ships in Swift, beside the dataset's YAML files: each speaker gets a
/// Handle made from their name (`Bert Johnson` → `@bert.johnson`). Registered with
/// `Migrator.code`, it runs under the files' rules — ledger, lock, resume, exact undo.
public struct SpeakerHandles: EntityMigration {
    public let version = MigrationVersion("4")!
    public let description = "Speakers get a handle"
    /// Bumped whenever `transform` changes (the ledger's checksum is of it).
    public let revision = "1"
    public let table = "events"
    public let filter: String? = "PartitionKey eq 'speakers'"
    /// Only where there is none: applied twice it changes nothing more.
    public let isIdempotent = true

    public init() {}

    static func handle(_ name: String) -> String {
        "@" + name.lowercased().split(separator: " ").joined(separator: ".")
    }

    public func transform(_ entity: TableEntity) -> EntityTransform {
        guard entity["Handle"] == nil, case .string(let name)? = entity["Name"] else { return .keep }
        var changed = entity
        changed["Handle"] = .string(Self.handle(name))
        return .replace(changed)
    }

    /// The speaker before: the Handle removed (undo checks that `transform` gives it back).
    public var inverse: (@Sendable (TableEntity) -> TableEntity?)? {
        { entity in
            guard entity["Handle"] != nil else { return nil }
            var before = entity
            before["Handle"] = nil
            return before
        }
    }
}
