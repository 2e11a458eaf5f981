import StorageProtocol

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

    /// The range's first key (inclusive): `spk` with `srk`, or the whole of partition `spk`.
    var start: (pk: String, rk: String?)? { startPartitionKey.map { ($0, startRowKey) } }

    /// Whether the key `(pk, rk)` lies before the range's start.
    func precedesStart(_ key: (String, String)) -> Bool {
        guard let spk = startPartitionKey else { return false }
        let order = key.0.byteOrder(spk)
        if order != 0 { return order < 0 }
        guard let srk = startRowKey else { return false }
        return key.1.byteOrder(srk) < 0
    }

    /// Whether the key `(pk, rk)` lies after the range's end: a scan in key order stops there.
    func isPastEnd(partitionKey pk: String, rowKey rk: String) -> Bool {
        guard let epk = endPartitionKey else { return false }
        let order = pk.byteOrder(epk)
        if order != 0 { return order > 0 }
        guard let erk = endRowKey else { return false }
        return rk.byteOrder(erk) > 0
    }

    /// Whether any key of partition `pk` can be in the range.
    func mayContain(partitionKey pk: String) -> Bool {
        if let spk = startPartitionKey, pk.byteOrder(spk) < 0 { return false }
        if let epk = endPartitionKey, pk.byteOrder(epk) > 0 { return false }
        return true
    }

    /// Refuses an operation on an entity outside the range. Azure's status for it is not
    /// documented (PROTOCOL.md §11); this is its answer to any operation a SAS does not cover.
    func check(partitionKey: String, rowKey: String) throws(ServiceError) {
        guard contains(partitionKey: partitionKey, rowKey: rowKey) else { throw SASAuthorization.notAuthorized }
    }
}
