import AzureStorage
import Crypto
import Foundation

/// RowKeys as name-based UUIDs of a kind's natural key, so the same data always gets the
/// same key and a re-run converges instead of duplicating.
///
/// The name hashed is, in UTF-8: the kind's name, a NUL, then for each key field in key
/// order `Name=Edm.Type:<byte length>:<canonical text>` followed by a NUL. Lengths make
/// it unambiguous whatever the values contain. The namespace is the dataset's
/// (``NameUUID/namespace(forDataset:)``). This layout is part of the determinism contract.
struct NaturalKey {
    let namespace: UUID
    let prefix: [UInt8]

    init(dataset: String, kind: String) {
        namespace = NameUUID.namespace(forDataset: dataset)
        prefix = Array(kind.utf8) + [0]
    }

    func rowKey(_ fields: [(name: String, value: EdmValue)]) -> RowKeyBits {
        var name = prefix
        for (field, value) in fields {
            let text = value.text
            name.append(contentsOf: field.utf8)
            name.append(UInt8(ascii: "="))
            name.append(contentsOf: value.type.rawValue.utf8)
            name.append(UInt8(ascii: ":"))
            name.append(contentsOf: String(text.utf8.count).utf8)
            name.append(UInt8(ascii: ":"))
            name.append(contentsOf: text.utf8)
            name.append(0)
        }
        let uuid = NameUUID.make(namespace: namespace, name: name)
        return withUnsafeBytes(of: uuid.uuid) { RowKeyBits($0) }
    }
}
