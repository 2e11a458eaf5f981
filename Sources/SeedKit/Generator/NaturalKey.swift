import AzureStorage
import Foundation

/// RowKeys as name-based UUIDs of a kind's natural key, so the same data always gets the
/// same key and a re-run converges instead of duplicating.
///
/// The name hashed is, in UTF-8: the kind's name, a NUL, then for each key field in key
/// order `Name=Edm.Type:<byte length>:<canonical text>` followed by a NUL. Lengths make
/// it unambiguous whatever the values contain. The namespace is the dataset's
/// (``NameUUID/namespace(forDataset:)``). This layout is part of the determinism contract.
struct NaturalKey: Sendable {
    /// The namespace's 16 bytes, the kind's name and a NUL: where every hash input starts.
    let prefix: [UInt8]

    init(dataset: String, kind: String) {
        let namespace = NameUUID.namespace(forDataset: dataset)
        prefix = withUnsafeBytes(of: namespace.uuid) { Array($0) } + Array(kind.utf8) + [0]
    }

    /// `Name=Edm.Type:`, the fixed start of a field's piece.
    static func header(field: String, type: EdmType) -> [UInt8] {
        Array(field.utf8) + [UInt8(ascii: "=")] + Array(type.rawValue.utf8) + [UInt8(ascii: ":")]
    }

    /// Appends one field's piece; `text` is scratch space for the value's canonical text.
    static func appendPiece(field: String, value: EdmValue, to out: inout [UInt8], text: inout [UInt8]) {
        text.removeAll(keepingCapacity: true)
        value.appendText(to: &text)
        out.append(contentsOf: field.utf8)
        out.append(UInt8(ascii: "="))
        out.append(contentsOf: value.type.rawValue.utf8)
        out.append(UInt8(ascii: ":"))
        out.append(contentsOf: String(text.count).utf8)
        out.append(UInt8(ascii: ":"))
        out.append(contentsOf: text)
        out.append(0)
    }

    /// A field's whole piece, for values known in advance (pick lists, ref groups).
    static func piece(field: String, value: EdmValue) -> [UInt8] {
        var out: [UInt8] = []
        var text: [UInt8] = []
        appendPiece(field: field, value: value, to: &out, text: &text)
        return out
    }

    /// The RowKey of a complete hash input (``prefix`` followed by every piece).
    static func rowKey(hashInput: [UInt8]) -> RowKeyBits {
        let uuid = NameUUID.make(hashInput: hashInput)
        return withUnsafeBytes(of: uuid.uuid) { RowKeyBits($0) }
    }

    /// The RowKey of key fields given as values.
    func rowKey(_ fields: [(name: String, value: EdmValue)]) -> RowKeyBits {
        var input = prefix
        var text: [UInt8] = []
        for (name, value) in fields { NaturalKey.appendPiece(field: name, value: value, to: &input, text: &text) }
        return NaturalKey.rowKey(hashInput: input)
    }
}

/// How one key field's piece is made from the key index's digits.
enum KeyPiece: Sendable {
    /// Precomputed pieces by digit of a component (pick lists, ref groups).
    case table(component: Int, pieces: [[UInt8]])
    /// A constant piece.
    case constant([UInt8])
    /// Computed per entity (dates, int ranges).
    case computed(slot: Int)
}
