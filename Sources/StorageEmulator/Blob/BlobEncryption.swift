import Crypto
import Foundation
import StorageProtocol

/// What a blob write asks its bytes to be encrypted with: a customer-provided key
/// (`x-ms-encryption-key`, `-key-sha256`, `-algorithm: AES256`) or an encryption scope of the
/// account (`x-ms-encryption-scope`), docs/PROTOCOL.md §7.
///
/// The emulator keeps a customer key's SHA-256 (never the key) with the blob and asks for the
/// key again wherever Azure does — reads, metadata, snapshots, appends and page writes — as
/// Azure cannot decrypt without it. The bytes on the emulator's disk are not encrypted with the
/// key (README, known differences): what a client can observe is Azure's. A scope must be one of
/// the account's (`azseed emulator --encryption-scope`, created through ARM on Azure).
struct BlobEncryption: Sendable, Equatable {
    /// Base64 SHA-256 of the customer-provided key.
    var keySHA256: String?
    var scope: String?

    /// The encryption a request asks for. Keys travel only over HTTPS, as on Azure.
    static func requested(_ request: TransportRequest, secure: Bool, scopes: Set<String>) throws -> BlobEncryption {
        var encryption = BlobEncryption(keySHA256: try customerKey(request, prefix: "x-ms-", secure: secure))
        if let scope = request.headers["x-ms-encryption-scope"] {
            guard scopes.contains(scope) else { throw unknownScope(scope, header: "x-ms-encryption-scope") }
            guard encryption.keySHA256 == nil else {
                throw ServiceError(
                    400, .invalidHeaderValue,
                    "The value for one of the HTTP headers is not in the correct format: x-ms-encryption-scope and a customer-provided key exclude each other."
                )
            }
            encryption.scope = scope
        }
        return encryption
    }

    /// The customer key a copy's source was written with (`x-ms-source-encryption-*`).
    static func sourceKey(_ request: TransportRequest, secure: Bool) throws -> String? {
        try customerKey(request, prefix: "x-ms-source-", secure: secure)
    }

    /// A customer-provided key's SHA-256, checked: the three headers together, AES256, a
    /// 256-bit key whose SHA-256 is the one stated. Nil when none is sent.
    static func customerKey(_ request: TransportRequest, prefix: String, secure: Bool) throws -> String? {
        let names = (key: prefix + "encryption-key", hash: prefix + "encryption-key-sha256", algorithm: prefix + "encryption-algorithm")
        let key = request.headers[names.key]
        let hash = request.headers[names.hash]
        let algorithm = request.headers[names.algorithm]
        guard key != nil || hash != nil || algorithm != nil else { return nil }
        guard let key else { throw missing(names.key) }
        guard let hash else { throw missing(names.hash) }
        guard let algorithm else { throw missing(names.algorithm) }
        guard secure else {
            throw ServiceError(
                400, .invalidHeaderValue,
                "The value for one of the HTTP headers is not in the correct format: a customer-provided key is sent only over HTTPS (start the emulator with a certificate)."
            )
        }
        guard algorithm == "AES256" else { throw ServiceError.invalidHeader(names.algorithm, algorithm) }
        guard let bytes = Data(base64Encoded: key), bytes.count == 32 else {
            throw ServiceError(
                400, .invalidHeaderValue,
                "The value for one of the HTTP headers is not in the correct format: \(names.key) is not a base64 256-bit key.")
        }
        let computed = Data(SHA256.hash(data: bytes)).base64EncodedString()
        guard computed.utf8.elementsEqual(hash.utf8) else {
            throw ServiceError(
                400, .invalidHeaderValue,
                "The value for one of the HTTP headers is not in the correct format: \(names.hash) is not the key's SHA-256.")
        }
        return computed
    }

    /// Whether a request holding customer key `given` (its SHA-256) may read or change `record`:
    /// a blob written with a key needs that key; a key sent for a blob written without one is
    /// refused too, as on Azure.
    static func checkKey(_ given: String?, for record: BlobRecord) throws {
        switch (record.keySHA256, given) {
        case (nil, nil): return
        case (nil, _?):
            throw ServiceError(
                409, .blobDoesNotUseCustomerSpecifiedEncryption,
                "The blob is not encrypted with customer specified encryption, but one was provided in the request.")
        case (_?, nil):
            throw ServiceError(
                409, .blobUsesCustomerSpecifiedEncryption,
                "The blob is encrypted with customer specified encryption, but it was not provided in the request.")
        case (let stored?, let sent?):
            guard stored.utf8.elementsEqual(sent.utf8) else {
                throw ServiceError(
                    409, .blobUsesCustomerSpecifiedEncryption,
                    "The given customer specified encryption does not match the encryption used to encrypt the blob.")
            }
        }
    }

    static func missing(_ header: String) -> ServiceError {
        ServiceError(400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: \(header).")
    }

    static func unknownScope(_ scope: String, header: String) -> ServiceError {
        ServiceError(
            409, .encryptionScopeNotFound,
            "The encryption scope '\(scope)' (\(header)) does not exist in this account; the emulator's scopes are those it was started with (one flag per scope)."
        )
    }
}
