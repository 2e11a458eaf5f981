import Foundation
import StorageProtocol

/// An entity as a query reads it: the keys and Timestamp from the row's own columns and the
/// properties still as the stored JSON bytes (`EntityJSONEncoder.encodeProperties`). A page is
/// written from those bytes (``StoredPropertiesTranscoder``); the properties are decoded only
/// when a `$filter` names one, `$select` picks some, or full metadata is asked for — decoding
/// every stored entity and encoding it again was 60 % of a query's time.
struct StoredRow: Sendable {
    var partitionKey: String
    var rowKey: String
    var timestamp: EdmDateTime
    /// `{"Name":value,"Name@odata.type":"Edm.X",…}`, names in byte order.
    var body: [UInt8]

    /// The whole entity, properties decoded.
    func decoded() throws -> StoredEntity {
        let entity = try EntityJSONReader.entity(Data(body), keys: (partitionKey, rowKey)).entity
        return StoredEntity(entity: entity, timestamp: timestamp)
    }

    /// The entity with its keys and no properties: all a filter that names only keys and
    /// Timestamp reads.
    var keysOnly: TableEntity { TableEntity(partitionKey: partitionKey, rowKey: rowKey) }
}

extension FilterExpression {
    /// Whether every property the filter names is PartitionKey, RowKey or Timestamp: it can then
    /// be evaluated on a row without decoding its properties.
    var namesOnlyKeys: Bool {
        switch self {
        case .comparison(let a, _, let b): Self.isKey(a) && Self.isKey(b)
        case .operand(let a): Self.isKey(a)
        case .and(let a, let b), .or(let a, let b): a.namesOnlyKeys && b.namesOnlyKeys
        case .not(let a): a.namesOnlyKeys
        }
    }

    private static func isKey(_ operand: Operand) -> Bool {
        guard case .property(let name) = operand else { return true }
        return JSONParser.isKeyOrTimestamp(name)
    }
}
