import AzureStorage
import Foundation
import GRDB

/// A container as stored.
struct ContainerRecord: Sendable {
    var name: String
    /// `container`, `blob`, or empty for private.
    var access: String
    var created: EdmDateTime
    var modified: EdmDateTime
    var etag: String
    var metadata: [(String, String)]
    /// The Set ACL body's signed identifiers, kept as sent.
    var acl: String

    init(row: Row) {
        name = row["name"]
        access = row["access"]
        created = EdmDateTime(ticks: row["created"])
        modified = EdmDateTime(ticks: row["modified"])
        etag = row["etag"]
        metadata = MetadataCoding.decode(row["metadata"])
        acl = row["acl"]
    }
}

/// A committed block of a block blob: its id and length, in order.
struct CommittedBlock: Sendable, Equatable {
    var id: String
    var size: Int
}

/// A blob as stored: properties in SQLite, bytes in the byte store under `data`.
struct BlobRecord: Sendable {
    var container: String
    var name: String
    var data: String
    var size: Int
    var contentType: String
    var contentMD5: String?
    var contentEncoding: String?
    var contentLanguage: String?
    var contentDisposition: String?
    var cacheControl: String?
    var created: EdmDateTime
    var modified: EdmDateTime
    var etag: String
    var metadata: [(String, String)]
    var blocks: [CommittedBlock]
    /// Set when the blob is the destination of a Copy Blob.
    var copy: CopyInfo?
    /// The tier Set Blob Tier chose; nil means Hot, inferred.
    var tier: String?

    init(row: Row) {
        container = row["container"]
        name = row["name"]
        data = row["data"]
        size = row["size"]
        contentType = row["contentType"]
        contentMD5 = row["contentMD5"]
        contentEncoding = row["contentEncoding"]
        contentLanguage = row["contentLanguage"]
        contentDisposition = row["contentDisposition"]
        cacheControl = row["cacheControl"]
        created = EdmDateTime(ticks: row["created"])
        modified = EdmDateTime(ticks: row["modified"])
        etag = row["etag"]
        metadata = MetadataCoding.decode(row["metadata"])
        blocks = MetadataCoding.decode(row["blocks"]).map { CommittedBlock(id: $0.0, size: Int($0.1) ?? 0) }
        copy = (row["copy"] as String?).flatMap(CopyInfo.init(encoded:))
        tier = row["tier"]
    }
}

/// What Get Blob Properties reports about the copy that made a blob (`x-ms-copy-*`). The
/// emulator copies at once, so a copy is always `success`.
struct CopyInfo: Sendable, Equatable {
    var id: String
    var source: String
    var bytes: Int
    var completed: EdmDateTime

    init(id: String, source: String, bytes: Int, completed: EdmDateTime) {
        self.id = id
        self.source = source
        self.bytes = bytes
        self.completed = completed
    }

    init?(encoded: String) {
        let fields = Dictionary(MetadataCoding.decode(encoded), uniquingKeysWith: { $1 })
        guard let id = fields["id"], let source = fields["source"], let bytes = fields["bytes"].flatMap(Int.init),
              let ticks = fields["completed"].flatMap(Int64.init) else { return nil }
        self.init(id: id, source: source, bytes: bytes, completed: EdmDateTime(ticks: ticks))
    }

    var encoded: String {
        MetadataCoding.encode([("id", id), ("source", source), ("bytes", String(bytes)), ("completed", String(completed.ticks))])
    }
}

/// The HTTP-settable properties of a blob, read from `x-ms-blob-*` headers.
struct BlobHTTPProperties: Sendable {
    var contentType: String
    var contentMD5: String?
    var contentEncoding: String?
    var contentLanguage: String?
    var contentDisposition: String?
    var cacheControl: String?
}

/// Name/value pairs as a JSON array of two-element arrays, order kept.
enum MetadataCoding {
    static func encode(_ pairs: [(String, String)]) -> String {
        let array = pairs.map { [$0.0, $0.1] }
        guard let data = try? JSONSerialization.data(withJSONObject: array) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ text: String) -> [(String, String)] {
        guard let array = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String]] else { return [] }
        return array.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }
}

/// An entity as stored, with the server-owned Timestamp.
struct StoredEntity: Sendable {
    var entity: TableEntity
    var timestamp: EdmDateTime

    /// `W/"datetime'<url-encoded timestamp>'"` (fact sheet §0.9).
    var etag: String { Self.etag(timestamp) }

    static func etag(_ timestamp: EdmDateTime) -> String {
        // Built byte by byte: Foundation's replacingOccurrences was a fifth of a query's time.
        var time: [UInt8] = []
        time.reserveCapacity(28)
        timestamp.appendISO8601(to: &time)
        var out = Array("W/\"datetime'".utf8)
        out.reserveCapacity(48)
        for byte in time {
            if byte == UInt8(ascii: ":") { out += [UInt8(ascii: "%"), UInt8(ascii: "3"), UInt8(ascii: "A")] } else { out.append(byte) }
        }
        out += [UInt8(ascii: "'"), UInt8(ascii: "\"")]
        return String(decoding: out, as: UTF8.self)
    }
}
