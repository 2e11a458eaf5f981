import AzureStorage
import Foundation

/// `lookup`: sets a property to a property of another table's entity, found by keys made from
/// templates over the entity (`partition: "{{CityId}}"`). The other table is read once, before
/// the step (its keys and that one property, at most ``LookupValues/maxEntities``), so each
/// entity's outcome is a pure function of it and of what was read (``EntityStep/withLookup(_:)``).
public struct LookupSpec: Sendable {
    /// What happens to an entity whose keys find no entity (or one without the property).
    public enum IfMissing: String, Sendable, CaseIterable {
        /// The run stops there, naming the entity.
        case fail
        /// The entity is left as it is.
        case skip
    }

    public let fromTable: String
    let partition: EntityTemplate
    let row: EntityTemplate
    public let property: String
    public let ifMissing: IfMissing
    /// What was read of `fromTable`; nil in a step as its file holds it.
    let values: LookupValues?

    init(fromTable: String, partition: EntityTemplate, row: EntityTemplate, property: String, ifMissing: IfMissing, values: LookupValues? = nil) {
        self.fromTable = fromTable
        self.partition = partition
        self.row = row
        self.property = property
        self.ifMissing = ifMissing
        self.values = values
    }

    /// Whether the table was read (the step can run).
    public var isRead: Bool { values != nil }

    /// The properties the key templates read.
    var reads: [String] { partition.text.variables + row.text.variables }
}

/// The looked-up table as read: each entity's `property` by its keys (compared by bytes).
public final class LookupValues: Sendable {
    /// The most entities a lookup reads from its table.
    public static let maxEntities = 1_000_000
    let byKey: [ExactString: EdmValue]

    /// `entries`: each entity's keys and value (entities without the property are left out).
    public init(_ entries: [(partitionKey: String, rowKey: String, value: EdmValue)]) {
        var byKey: [ExactString: EdmValue] = [:]
        byKey.reserveCapacity(entries.count)
        for entry in entries { byKey[Self.key(entry.partitionKey, entry.rowKey)] = entry.value }
        self.byKey = byKey
    }

    static func key(_ partitionKey: String, _ rowKey: String) -> ExactString { ExactString(partitionKey + "\u{0}" + rowKey) }
}

extension EntityStep {
    /// The lookup this step does, if it is one.
    public var lookup: LookupSpec? {
        if case .lookup(_, let spec) = change { return spec }
        return nil
    }

    /// This step with what was read of its lookup's table (a copy: the file's step stays unread).
    public func withLookup(_ values: LookupValues) -> EntityStep {
        guard case .lookup(let name, let spec) = change else { return self }
        var copy = self
        copy.change = .lookup(
            name: name,
            LookupSpec(
                fromTable: spec.fromTable, partition: spec.partition, row: spec.row, property: spec.property, ifMissing: spec.ifMissing,
                values: values))
        return copy
    }
}

extension LookupSpec {
    /// What the lookup makes of `entity`: the value found, nil to leave it (skip), or why not.
    func value(for entity: TableEntity) -> Result<EdmValue?, ComputeError> {
        if let missing = partition.missing(in: entity) ?? row.missing(in: entity) { return .failure(ComputeError(missing)) }
        guard let values else { return .failure(ComputeError("table \(fromTable) was not read before the step; this is a defect of azseed")) }
        let (pk, rk) = (partition.render(for: entity), row.render(for: entity))
        if let found = values.byKey[LookupValues.key(pk, rk)] { return .success(found) }
        if ifMissing == .skip { return .success(nil) }
        return .failure(
            ComputeError(
                "table \(fromTable) has no entity ('\(Printable.escaped(String(pk.prefix(64)), quotes: false))', '\(Printable.escaped(String(rk.prefix(64)), quotes: false))') with \(Printable.escaped(property)) (if-missing: skip leaves such entities)"
            ))
    }
}
