import AzureStorage
import Foundation
import SeedKit

/// What the latest apply of a dataset to a target was made from, as the target's ledger
/// keeps it: enough to make the same desired state again on another day.
///
/// Stored as one entity of ``Ledger/table``: PartitionKey `apply` (the record's kind; later
/// kinds, such as migration history, take other partitions), RowKey the dataset's name
/// (characters a key may not hold percent-encoded), and `Schema` the layout's version.
public struct ApplyRecord: Sendable, Equatable {
    /// The layout this azseed writes; a record of a later one is refused rather than misread.
    public static let schema: Int32 = 1
    /// The PartitionKey of apply records.
    public static let partition = "apply"

    public var dataset: String
    /// SHA-256 of the desired state (``PlanHeader/desiredDigest``), hex.
    public var desiredDigest: String
    public var seed: UInt64
    /// The reference time the window was resolved from, and the window.
    public var now: EdmDateTime
    public var window: ResolvedWindow
    public var counts: [String: Int]
    /// The shard the apply covered (the latest shard to apply, when shards ran).
    public var shard: Shard?
    /// `azseed <version>` that applied.
    public var tool: String
    /// When the apply started.
    public var appliedAt: EdmDateTime
    /// The inputs that came from flags (`seed`, `window`; counts are recorded only when given),
    /// which a later run without them reuses; what came from the dataset's file comes from it
    /// again, edited or not. Nil in a record an older azseed wrote (only its time is reused).
    public var given: Set<String>? = nil

    public init(
        dataset: String, desiredDigest: String, seed: UInt64, now: EdmDateTime, window: ResolvedWindow, counts: [String: Int], shard: Shard?,
        tool: String, appliedAt: EdmDateTime, given: Set<String>? = nil
    ) {
        self.given = given
        self.dataset = dataset
        self.desiredDigest = desiredDigest
        self.seed = seed
        self.now = now
        self.window = window
        self.counts = counts
        self.shard = shard
        self.tool = tool
        self.appliedAt = appliedAt
    }

    /// Whether `other` records the same inputs: an apply that would record what is already
    /// there leaves the ledger alone. When, which shard and which azseed do not count, nor a
    /// reference time that gives the same window (it makes the same data).
    public func sameInputs(as other: ApplyRecord) -> Bool {
        dataset.utf8.elementsEqual(other.dataset.utf8) && desiredDigest == other.desiredDigest && seed == other.seed
            && window == other.window && counts == other.counts && given == other.given
    }

    /// The record as the ledger's entity.
    public var entity: TableEntity {
        var properties: EntityProperties = [
            "Schema": .int32(Self.schema),
            "Dataset": .string(dataset),
            "DesiredDigest": .string(desiredDigest),
            // Edm.Int64 is signed; a seed is up to 2^64-1, so it is kept as its decimal text.
            "Seed": .string(String(seed)),
            "Now": .dateTime(now),
            "WindowFrom": .dateTime(window.from),
            "WindowTo": .dateTime(window.to),
            "Counts": .string(counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")),
            "Tool": .string(tool),
            "AppliedAt": .dateTime(appliedAt),
        ]
        if let shard { properties["Shard"] = .string(shard.description) }
        if let given { properties["Given"] = .string(given.sorted().joined(separator: ",")) }
        return TableEntity(partitionKey: Self.partition, rowKey: Self.rowKey(dataset: dataset), properties: properties)
    }

    /// Reads a record back. The ledger lives in the target, where anyone with write access
    /// can change it: every field is checked, and a record that is not one says so.
    public init(_ entity: TableEntity) throws(LedgerRecordDamaged) {
        func damaged(_ what: String) -> LedgerRecordDamaged { LedgerRecordDamaged(rowKey: entity.rowKey, problem: what) }
        guard case .int32(let schema)? = entity["Schema"], schema >= 1 else { throw damaged("no Schema of 1 or more") }
        guard schema <= Self.schema else { throw damaged("written by a later azseed, layout \(schema); upgrade azseed") }
        func string(_ name: String) throws(LedgerRecordDamaged) -> String {
            guard case .string(let value)? = entity[name] else { throw damaged("\(name) is not a string") }
            return value
        }
        func date(_ name: String) throws(LedgerRecordDamaged) -> EdmDateTime {
            guard case .dateTime(let value)? = entity[name] else { throw damaged("\(name) is not a DateTime") }
            return value
        }
        func isDecimal(_ text: Substring) -> Bool { !text.isEmpty && text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }
        let seedText = try string("Seed")
        guard isDecimal(Substring(seedText)), let seed = UInt64(seedText) else { throw damaged("Seed is not 0 to 2^64-1") }
        var counts: [String: Int] = [:]
        let countsText = try string("Counts")
        for item in countsText.isEmpty ? [] : countsText.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, isDecimal(parts[1]), let n = Int(parts[1]), n >= 1, counts[String(parts[0])] == nil else {
                throw damaged("Counts is not KIND=N,… with each kind once")
            }
            counts[String(parts[0])] = n
        }
        var shard: Shard?
        if entity["Shard"] != nil {
            guard let parsed = Shard(try string("Shard")) else { throw damaged("Shard is not I/N") }
            shard = parsed
        }
        let window = ResolvedWindow(from: try date("WindowFrom"), to: try date("WindowTo"))
        guard window.from.ticks < window.to.ticks else { throw damaged("the window ends before it starts") }
        self.init(
            dataset: try string("Dataset"), desiredDigest: try string("DesiredDigest"), seed: seed, now: try date("Now"), window: window,
            counts: counts, shard: shard, tool: try string("Tool"), appliedAt: try date("AppliedAt"))
        if entity["Given"] != nil {
            let names = try string("Given").split(separator: ",").map(String.init)
            guard names.allSatisfy({ ["seed", "window"].contains($0) }) else { throw damaged("Given is not a list of seed and window") }
            given = Set(names)
        }
    }

    /// The RowKey of a dataset's record: its name, with `%` and the characters Azure refuses
    /// in keys (`/`, `\`, `#`, `?`, controls) percent-encoded, so every name has one key.
    public static func rowKey(dataset: String) -> String {
        var key = ""
        for scalar in dataset.unicodeScalars {
            let v = scalar.value
            if v < 0x20 || (0x7F...0x9F).contains(v) || "/\\#?%".unicodeScalars.contains(scalar) {
                for byte in String(scalar).utf8 { key += String(format: "%%%02X", byte) }
            } else {
                key.unicodeScalars.append(scalar)
            }
        }
        // A key holds at most 1 KiB; a longer name is known by its digest.
        return key.utf8.count <= 512 ? key : "uuid-" + NameUUID.make(namespace: NameUUID.azseedNamespace, name: dataset.utf8).uuidString.lowercased()
    }
}

/// A ledger record that is not one (edited by hand, or by someone who may write the target's
/// tables): refused, never misread. With `--now` it is replaced instead.
public struct LedgerRecordDamaged: PersonFacingError, Sendable {
    /// The record's RowKey (the dataset's name, encoded: printable).
    public var rowKey: String
    public var problem: String

    public var phrase: Phrase {
        "the ledger record of dataset '\(rowKey)' in table \(ReservedNames.ledgerTable) is damaged (\(problem)); delete that entity, or pass \(Setting.referenceTime) (an apply with \(Setting.referenceTime) replaces it)"
    }
}
