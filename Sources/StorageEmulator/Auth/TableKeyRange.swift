import AzureStorage

/// The key range a table SAS is limited to (`spk`+`srk` from, `epk`+`erk` to, both ends
/// inclusive; docs/PROTOCOL.md §11). Keys compare by their bytes, as the Table service orders
/// them: queries return only entities inside the range, and any other operation on an entity
/// outside it is refused.
struct TableKeyRange: Sendable, Equatable {
    var startPartitionKey: String?
    var startRowKey: String?
    var endPartitionKey: String?
    var endRowKey: String?

    /// The range the SAS fields give, nil when they give none. `srk` needs `spk`, `erk` needs `epk`.
    init?(spk: String, srk: String, epk: String, erk: String) throws(ServiceError) {
        if spk.isEmpty && srk.isEmpty && epk.isEmpty && erk.isEmpty { return nil }
        guard srk.isEmpty || !spk.isEmpty, erk.isEmpty || !epk.isEmpty else {
            throw SharedAccessSignature.failed("Signature fields not well formed: 'srk' needs 'spk' and 'erk' needs 'epk'.")
        }
        startPartitionKey = spk.isEmpty ? nil : spk
        startRowKey = srk.isEmpty ? nil : srk
        endPartitionKey = epk.isEmpty ? nil : epk
        endRowKey = erk.isEmpty ? nil : erk
    }

    func contains(partitionKey pk: String, rowKey rk: String) -> Bool {
        if let spk = startPartitionKey {
            let order = pk.byteOrder(spk)
            if order < 0 { return false }
            if order == 0, let srk = startRowKey, rk.byteOrder(srk) < 0 { return false }
        }
        if let epk = endPartitionKey {
            let order = pk.byteOrder(epk)
            if order > 0 { return false }
            if order == 0, let erk = endRowKey, rk.byteOrder(erk) > 0 { return false }
        }
        return true
    }

    /// Refuses an operation on an entity outside the range. Azure's status for it is not
    /// documented (PROTOCOL.md §11); this is its answer to any operation a SAS does not cover.
    func check(partitionKey: String, rowKey: String) throws(ServiceError) {
        guard contains(partitionKey: partitionKey, rowKey: rowKey) else { throw SASAuthorization.notAuthorized }
    }
}
