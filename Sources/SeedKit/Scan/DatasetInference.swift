import AzureStorage
import Foundation

/// A container as a scan saw it: its access level and blobs (names, sizes, types).
public struct ScannedContainer: Sendable {
    public var name: String
    public var access: PublicAccess
    public var blobs: [(name: String, size: Int, contentType: String)]
    /// The name each blob is written under when it is not its own (``placeholderNames()``).
    public var renamed: [String: String] = [:]
    /// What each blob stores besides its bytes, when the scan copies it exactly
    /// (`--copy-values`): the dataset's `properties:` file of the container.
    public var properties: [BlobProperties] = []
    /// The container's own metadata, when the scan copies it exactly (`--copy-values`).
    public var metadata: [String: String]?

    public init(name: String, access: PublicAccess, blobs: [(name: String, size: Int, contentType: String)]) {
        self.name = name
        self.access = access
        self.blobs = blobs
    }

    /// The name a blob of this container is written under in the dataset.
    public func writtenName(_ blob: String) -> String { renamed[blob] ?? blob }

    /// The container with its blobs written under made-up names (`blob-1.jpg`: the extension,
    /// and with it the content type, kept): a blob's name may name a person, and is seen once.
    public func placeholderNames() -> ScannedContainer {
        var copy = self
        for (i, blob) in blobs.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }).enumerated() {
            let last = blob.name.split(separator: "/").last ?? ""
            let ext = last.contains(".") ? "." + ValuePrivacy.safe(String(last.split(separator: ".").last ?? "")) : ""
            copy.renamed[blob.name] = "blob-\(i + 1)\(ext)"
        }
        return copy
    }
}

/// What a scan read, ready to become a dataset.
public struct ScanInput: Sendable {
    /// The dataset's name (it namespaces the RowKeys it generates).
    public var name: String
    /// Where the data came from, for the summary (an endpoint without its query).
    public var source: String
    /// The blob endpoint of the scanned account, to recognise blob URLs in entities.
    public var blobEndpoint: String
    public var containers: [ScannedContainer]
    public var partitions: [PartitionObservation]
    /// At most this many entities' values are copied per partition.
    public var sample: Int
    /// Whether the container folders hold the blobs' own bytes (else placeholders).
    public var copiedBlobs: Bool
    /// Whether values may be copied as they are (`scan --copy-values`): small partitions as
    /// rows, every value in picks. Off, no value that identifies a person or is seen in fewer
    /// than five entities reaches the dataset (``ValuePrivacy``).
    public var copyValues: Bool
    /// How the dataset's comments and the summary spell the settings they name.
    public var names: SettingNames

    public init(
        name: String, source: String, blobEndpoint: String, containers: [ScannedContainer], partitions: [PartitionObservation],
        sample: Int, copiedBlobs: Bool, copyValues: Bool = false, names: SettingNames = .library
    ) {
        self.names = names
        self.copyValues = copyValues
        self.name = name
        self.source = source
        self.blobEndpoint = blobEndpoint
        self.containers = containers
        self.partitions = partitions
        self.sample = sample
        self.copiedBlobs = copiedBlobs
    }
}

/// A dataset inferred from a scan: `dataset.yaml` (its first lines say what was inferred and
/// why), the templates it names, and what the scan noticed but could not express.
public struct InferredDataset: Sendable {
    public var yaml: String
    public var templates: [(name: String, text: String)]
    public var summary: [String]
    /// Each kind with the partition it was inferred from: what the fidelity report compares.
    public var kinds: [ScannedKind] = []
    /// Whether the account's values may be copied (`--copy-values`): the report follows suit.
    public var copyValues = false
}

/// A kind of an inferred dataset and the observed partition it stands for.
public struct ScannedKind: Sendable {
    public var table: String
    /// The kind's partition in the dataset (a made-up one when the observed one may not be copied).
    public var partition: String
    public var name: String
    public var observation: PartitionObservation
}

/// Infers a dataset that reproduces the shape of what a scan read (README, "azseed scan"):
/// per table partition a kind — listed `rows` when it holds at most `sample` entities,
/// generated (`count`) otherwise — with each property's EDM type and presence; properties
/// holding another partition's RowKeys (or unique values) become `ref` + `from`, and values
/// copied from the referenced entity `from` it too; blob URLs become `blobUrl`; text that is
/// other properties' values in fixed words becomes a template; few distinct values a weighted
/// `pick`; numbers a range or a sequence; dates a window at their resolution; other text a
/// sampled list. A natural key is proposed from properties whose values are unique.
public enum DatasetInference {
    /// Where a container's copied blobs' content headers and metadata are written, in the dataset.
    public static func propertiesFile(_ container: String) -> String { "blobs/\(container).json" }

    public static func infer(_ input: ScanInput) -> InferredDataset {
        var engine = Inference(input: input)
        return engine.run()
    }
}

struct Reference {
    var field: String
    var target: Int
    /// The target's property the values match: "RowKey" or a unique property.
    var via: String
    var property: String
}

struct KindDraft {
    var observation: PartitionObservation
    /// The PartitionKey the dataset writes: the observed one, or a made-up one when that one
    /// may not be copied (``ValuePrivacy``).
    var partition: String
    var name: String
    var rows: Bool
    /// The file of the partition's entities as they are (`scan --copy-values`): the kind
    /// copies them (`entities:`), and what was inferred is written beside it as comments.
    var copiedFile: String?
    var references: [Reference] = []
    /// Property → YAML of its field (generated properties, refs and helpers), in order.
    var fields: [(name: String, yaml: String)] = []
    var columns: [String] = []
    var omit: [String] = []
    var key: [String] = []
    var keyReason = ""
    /// How many distinct values each generated field can take (its share of the key space).
    var domains: [String: Double] = [:]
    var notes: [String] = []
    /// Row helper columns: name → per entity value (blob names).
    var helperColumns: [(name: String, values: [String: String])] = []
    /// Unique columns of addresses, phone numbers or names, made numbered text (which can key):
    /// the `fake:` vocabulary each may use instead when it is not the key.
    var fakeWhenNotKey: [String: String] = [:]
}

struct Inference {
    let input: ScanInput
    var kinds: [KindDraft] = []
    var templates: [(name: String, text: String)] = []
    var summary: [String] = []

    init(input: ScanInput) { self.input = input }

    /// The dataset's window (every date seen), in ticks.
    var windowTicks: (from: Int64, to: Int64) = (0, EdmDateTime.ticksPerDay)

    /// `name` with every character past ASCII written `\u{…}`: two names that print alike
    /// are told apart.
    static func scalars(_ name: String) -> String {
        name.unicodeScalars.map { $0.value < 0x7F && $0.value >= 0x20 ? String($0) : "\\u{\(String($0.value, radix: 16, uppercase: true))}" }.joined()
    }

    mutating func run() -> InferredDataset {
        // By bytes, as Azure orders keys: `é` and `e` + U+0301 are two partitions, in one order.
        let observations = input.partitions.sorted {
            $0.table != $1.table ? $0.table < $1.table : $0.partition.byteOrder($1.partition) < 0
        }
        var used = Set<String>()
        var madeUp: [String: Int] = [:]
        for var observation in observations {
            observation.sortKept()
            for (dropped, kept) in observation.dropCanonicalTwins() {
                summary.append(
                    "table \(observation.table): property '\(Self.scalars(dropped))' is '\(Self.scalars(kept))' in other bytes; Azure keeps both, a YAML key cannot tell them apart: left out of the inferred fields\(input.copyValues ? " (copied entities keep it)" : "")"
                )
            }
            var partition = observation.partition
            if !input.copyValues, !ValuePrivacy.mayCopy(.string(partition), seenIn: observation.count) {
                madeUp[observation.table, default: 0] += 1
                partition = "\(observation.table)-partition-\(madeUp[observation.table]!)"
            }
            var name = Self.kindName(partition)
            if used.contains(name) { name = Self.kindName(observation.table) + "_" + name }
            while used.contains(name) { name += "_" }
            used.insert(name)
            kinds.append(
                KindDraft(
                    observation: observation, partition: partition, name: name,
                    rows: input.copyValues && observation.count <= input.sample && observation.entities != nil,
                    copiedFile: input.copyValues ? observation.copiedFile : nil))
        }
        let pastBudget = observations.filter(\.pastBudget).count
        if pastBudget > 0 {
            summary.append(
                "\(pastBudget) small partition\(pastBudget == 1 ? "" : "s") came past the \(PartitionObservations.defaultKeptBudget >> 20) MiB of whole entities a scan keeps for rows and references: inferred from \(pastBudget == 1 ? "its" : "their") statistics and sample, as a large one is"
            )
        }
        findReferences()
        windowTicks = windowRange() ?? windowTicks
        for index in kinds.indices { describe(index) }
        return InferredDataset(
            yaml: yaml(), templates: templates, summary: summary,
            kinds: kinds.map { ScannedKind(table: $0.observation.table, partition: $0.partition, name: $0.name, observation: $0.observation) },
            copyValues: input.copyValues)
    }

    // MARK: - names

    static func kindName(_ text: String) -> String {
        var letters = String(text.unicodeScalars.filter { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") })
        if letters.isEmpty || letters.first!.isNumber { letters = "kind" + letters }
        // A partition in capitals (`NO`, `SE`) is a name, not a camel-cased word: all lower case.
        letters = letters == letters.uppercased() ? letters.lowercased() : letters.prefix(1).lowercased() + letters.dropFirst()
        if letters.count > 3, letters.hasSuffix("s"), !letters.hasSuffix("ss") { letters.removeLast() }
        return letters
    }
}
