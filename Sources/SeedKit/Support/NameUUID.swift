import Crypto
import Foundation

/// Name-based UUIDs (RFC 4122 version 5: SHA-1 of a namespace and a name).
public enum NameUUID {
    /// The namespace of every azseed key; a dataset's namespace is derived from it.
    public static let azseedNamespace = UUID(uuidString: "6f1c4d0e-59a3-4b7a-9a43-2d1f3c0e8a51")!

    /// The version-5 UUID of `name` in `namespace`.
    public static func make(namespace: UUID, name: some Sequence<UInt8>) -> UUID {
        var hasher = Insecure.SHA1()
        withUnsafeBytes(of: namespace.uuid) { hasher.update(bufferPointer: $0) }
        hasher.update(data: Array(name))
        var bytes = Array(hasher.finalize().prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// The version-5 UUID whose hash input (namespace bytes then name) is already in one
    /// buffer: the hot path of key generation, with no copies.
    public static func make(hashInput: [UInt8]) -> UUID {
        let digest = Insecure.SHA1.hash(data: hashInput)
        return withUnsafeBytes(of: digest) { raw in
            var b = Array(raw.prefix(16))
            b[6] = (b[6] & 0x0F) | 0x50
            b[8] = (b[8] & 0x3F) | 0x80
            return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        }
    }

    /// The namespace of one dataset's keys.
    public static func namespace(forDataset name: String) -> UUID {
        make(namespace: azseedNamespace, name: Array("dataset:\(name)".utf8))
    }
}
