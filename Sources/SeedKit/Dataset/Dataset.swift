import AzureStorage
import Foundation

/// A dataset: everything azseed needs to know to build a desired state, read from a
/// `dataset.yaml` file. SpeakEasy is one dataset; users write their own without Swift.
public struct Dataset: Sendable {
    /// The dataset's id; it namespaces every generated RowKey.
    public var name: String
    /// The folder holding `dataset.yaml`.
    public var directory: URL
    /// The path of `dataset.yaml`, as errors name it.
    public var file: String
    /// The seed used when `--seed` is not given.
    public var seed: UInt64
    public var window: WindowSpec
    public var containers: [ContainerSpec]
    public var tables: [TableSpec]
    /// Where `template:` files are looked up.
    public var templatesDirectory: URL

    /// Every kind of every table, in declaration order.
    public var kinds: [KindSpec] { tables.flatMap(\.kinds) }

    public func kind(named name: String) -> KindSpec? { kinds.first { $0.name == name } }

    /// The folders the dataset reads (its own, templates, images), each named for messages:
    /// what an output folder must not replace.
    public var inputFolders: [(what: String, folder: URL)] {
        [("the dataset folder", directory), ("the dataset's templates folder", templatesDirectory)]
            + containers.compactMap { spec in spec.filesDirectory.map { ("the files folder of container \(spec.name)", $0) } }
    }
}

/// The dataset's default date window, resolved against `--now` unless `--from`/`--to` say otherwise.
public struct WindowSpec: Sendable, Equatable {
    public enum Start: Sendable, Equatable {
        /// `today`, `today+N`, `today-N`: days relative to `--now` truncated to midnight UTC.
        case today(offsetDays: Int)
        case absolute(EdmDateTime)
    }
    public var from: Start
    /// Length of the window when no explicit end is set.
    public var days: Int?
    /// An explicit end (exclusive).
    public var to: EdmDateTime?
}

/// A blob container the dataset owns and the files it uploads.
public struct ContainerSpec: Sendable {
    public var name: String
    public var access: PublicAccess
    /// The folder whose files become the container's blobs (nil: none).
    public var filesDirectory: URL?
    public var line: Int
    /// Generated blobs (`blobs:`), besides the files.
    public var blobGroups: [BlobGroupSpec] = []
    /// `properties: FILE`: each file's content headers and metadata (``BlobPropertiesFile``).
    public var propertiesFile: URL? = nil
    /// `metadata: {name: value}`: the container's own metadata, held exactly (none: the
    /// target's is left alone).
    public var metadata: [String: String]? = nil
}

/// A table and the kinds of entity stored in it.
public struct TableSpec: Sendable {
    public var name: String
    public var kinds: [KindSpec]
    public var line: Int
}

/// One kind of entity: explicit rows, `count` generated entities or copied ones (`entities:`),
/// in one partition.
public struct KindSpec: Sendable {
    public var name: String
    public var partition: String
    /// The natural key: RowKey is a name-based UUID of these fields' values.
    public var key: [String]
    public var rows: [Row]?
    public var count: Int?
    public var fields: [FieldDefinition]
    /// Helper columns that are not stored.
    public var omit: [String]
    /// Explicit EDM types of row columns.
    public var columnTypes: [String: EdmType]
    public var table: String
    public var line: Int
    /// The line of `count:` (for errors about it).
    public var countLine: Int
    /// `entities: FILE`: the kind's entities copied as they are — one entity a line of OData
    /// JSON, keys and EDM types included (the snapshot table format), what `scan --copy-values`
    /// writes; nil for rows and generated kinds.
    public var entitiesFile: URL? = nil

    /// Row column names, in the order of the first row.
    public var columns: [String] { rows?.first?.values.map(\.0) ?? [] }

    /// The field definition named `name`, if it is generated.
    public func field(named name: String) -> FieldDefinition? { fields.first { $0.name == name } }

    /// Every stored property name (columns and fields, less omitted ones).
    public var storedNames: [String] {
        (columns + fields.filter { !$0.isRef }.map(\.name)).filter { !omit.contains($0) }
    }

    /// Stored fields that hold another kind's RowKey (`from: <ref>.RowKey`), with that
    /// kind: when the planner keeps a referenced entity under a foreign RowKey, these
    /// fields must point at the RowKey it really has.
    public var rowKeyReferences: [(field: String, kind: String)] {
        fields.compactMap { field in
            guard case .from(let ref, "RowKey") = field.generator, !omit.contains(field.name),
                case .ref(let target)? = self.field(named: ref)?.generator
            else { return nil }
            return (field.name, target)
        }
    }
}

/// One explicit row of a kind.
public struct Row: Sendable {
    public var values: [(String, EdmValue)]
    public var line: Int

    /// Columns given as `~` (null) in this row: the entity does not have them.
    public var absent: Set<String> = []

    public subscript(name: String) -> EdmValue? { values.first { $0.0 == name }?.1 }
}

/// A generated field.
public struct FieldDefinition: Sendable {
    public var name: String
    public var generator: FieldGenerator
    public var line: Int
    /// `presence: p`: the property is on this fraction of entities (drawn per entity after
    /// every field); nil means on all of them.
    public var presence: Double? = nil
    /// `unique: true`: no two entities of the kind share a value (pick, int, date, sequence).
    public var unique = false
    /// `exact: true` on a pick with weights: every run of sum-of-weights entities (by generation
    /// index) holds each value exactly its weight's times, dealt in a seeded order.
    public var exact = false

    /// A `ref` names an entity of another kind; it is a helper, never stored.
    public var isRef: Bool {
        if case .ref = generator { return true }
        return false
    }
}

/// How a field's value is made.
public enum FieldGenerator: Sendable {
    case const(EdmValue)
    /// Uniform from a list.
    case pick([EdmValue])
    /// From a list, each value as often as its weight says (`pick` with `weights`).
    case weightedPick([EdmValue], weights: [UInt64])
    /// One entity of another kind, drawn uniformly.
    case ref(kind: String)
    /// A property of a `ref` field's entity (including RowKey and PartitionKey).
    case from(ref: String, property: String)
    /// Uniform in a window at a resolution (in ticks), as Edm.DateTime: the field's own window
    /// (`date: {from, to}`, absolute) or, nil, the dataset's.
    case date(resolutionTicks: Int64, window: ResolvedWindow? = nil)
    /// At or after a referenced entity's date (`date: {after: device.Installed, within: 30d}`):
    /// that date plus a uniform whole number of resolution steps below `within`.
    case dateAfter(ref: String, property: String, withinTicks: Int64, resolutionTicks: Int64)
    /// Uniform in `min...max`, typed Int32 or Int64.
    case int(min: Int64, max: Int64, type: EdmType)
    /// Uniform in `[min, max)`, rounded to `round` decimal places when given.
    case double(min: Double, max: Double, round: Int? = nil)
    /// `start + index × step`: the entity's generation index (its row, or its draw when the kind is keyed by
    /// the sequence), else its place in RowKey order for a kind drawn from a key space.
    case sequence(start: Int64, step: Int64, type: EdmType)
    /// Mustache text over the entity's fields.
    case template(Template)
    /// A made-up value from a built-in vocabulary (``Vocabulary``).
    case fake(FakeValue)
    /// The URL of a blob of one of the dataset's containers, its name a Mustache template.
    case blobURL(container: String, name: Template)
}

/// What a `fake:` field makes.
public enum FakeValue: Sendable, Equatable {
    /// A person's name (`Ada Novak`).
    case name
    /// An e-mail address: of a drawn name, or — `of` a field — made from that field's text.
    case email(of: String?, domain: String)
    /// A phone number of the fictional 555 exchange (`+1 555 012 3456`).
    case phone
}
