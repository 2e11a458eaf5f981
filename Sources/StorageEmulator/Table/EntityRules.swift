import StorageProtocol

/// The Table service's limits on an entity (docs/PROTOCOL.md §6), with its error codes.
enum EntityRules {
    /// Keys, property names and values of an entity about to be written.
    static func check(_ entity: TableEntity) throws(ServiceError) {
        for (label, key) in [("PartitionKey", entity.partitionKey), ("RowKey", entity.rowKey)] {
            if let problem = StorageNames.keyProblem(key) {
                throw ServiceError(400, .outOfRangeInput, "The '\(label)' parameter of value '\(key)' is out of range: \(problem).")
            }
        }
        guard entity.properties.count <= StorageNames.maxProperties else { throw tooManyProperties }
        for (name, value) in entity.properties {
            if name.utf16.count > 255 {
                throw ServiceError(400, .propertyNameTooLong, "The property name exceeds the maximum allowed length (255).")
            }
            if let problem = StorageNames.propertyProblem(name) {
                throw ServiceError(400, .propertyNameInvalid, "The property name '\(name)' is invalid: \(problem).")
            }
            if case .dateTime(let d) = value, !d.isInAzureRange {
                throw ServiceError(
                    400, .outOfRangeInput,
                    "The value of property '\(name)' is out of range: Edm.DateTime values lie between 1601-01-01 and 9999-12-31 UTC.")
            }
            let tooLarge: Bool
            switch value {
            case .string(let s): tooLarge = s.utf16.count > StorageNames.maxStringUTF16
            case .binary(let b): tooLarge = b.count > StorageNames.maxBinaryBytes
            default: tooLarge = false
            }
            if tooLarge {
                throw ServiceError(400, .propertyValueTooLarge, "The property value of '\(name)' exceeds the maximum allowed size (64KB).")
            }
        }
        try checkSize(entity)
    }

    static let tooManyProperties = ServiceError(
        400, .tooManyProperties, "The entity contains more properties than allowed (\(StorageNames.maxProperties)).")

    /// The whole entity, sized as the service documents it, is at most 1 MiB.
    static func checkSize(_ entity: TableEntity) throws(ServiceError) {
        guard StorageNames.entitySize(entity) <= StorageNames.maxEntityBytes else {
            throw ServiceError(400, .entityTooLarge, "The entity is larger than the maximum allowed size (1MB).")
        }
    }
}
