import Foundation
import StorageProtocol

/// List Blobs answered as an Apache Arrow IPC stream (`Accept: application/vnd.apache.arrow.stream`,
/// docs/PROTOCOL.md §7, "Arrow listings"): one row per blob or prefix, a column per element of
/// `<Blob>` named as the element is (the SDKs map them so), `ResourceType` telling a prefix
/// (`blobprefix`) from a blob, metadata and tags as `map<utf8, utf8>` columns when included, and
/// the next marker in the schema's metadata. Every page has the same columns; what a blob does
/// not have is null.
enum BlobListingArrow {
    static let mediaType = "application/vnd.apache.arrow.stream"

    /// The columns before metadata and tags, in `<Blob>`'s order.
    static let columns: [ArrowField] = [
        ArrowField(name: "Name", type: .utf8, nullable: false), ArrowField(name: "ResourceType", type: .utf8, nullable: false),
        ArrowField(name: "Deleted", type: .bool), ArrowField(name: "Snapshot", type: .utf8), ArrowField(name: "VersionId", type: .utf8),
        ArrowField(name: "IsCurrentVersion", type: .bool), ArrowField(name: "Creation-Time", type: .timestampMilliseconds),
        ArrowField(name: "Last-Modified", type: .timestampMilliseconds), ArrowField(name: "Etag", type: .utf8),
        ArrowField(name: "Content-Length", type: .int64), ArrowField(name: "Content-Type", type: .utf8),
        ArrowField(name: "Content-Encoding", type: .utf8), ArrowField(name: "Content-Language", type: .utf8),
        ArrowField(name: "Content-CRC64", type: .utf8), ArrowField(name: "Content-MD5", type: .utf8),
        ArrowField(name: "Cache-Control", type: .utf8), ArrowField(name: "Content-Disposition", type: .utf8),
        ArrowField(name: "BlobType", type: .utf8), ArrowField(name: "AccessTier", type: .utf8),
        ArrowField(name: "AccessTierInferred", type: .bool), ArrowField(name: "SmartAccessTier", type: .utf8),
        ArrowField(name: "ArchiveStatus", type: .utf8), ArrowField(name: "RehydratePriority", type: .utf8),
        ArrowField(name: "AccessTierChangeTime", type: .timestampMilliseconds), ArrowField(name: "x-ms-blob-sequence-number", type: .int64),
        ArrowField(name: "Sealed", type: .bool), ArrowField(name: "LeaseStatus", type: .utf8), ArrowField(name: "LeaseState", type: .utf8),
        ArrowField(name: "LeaseDuration", type: .utf8), ArrowField(name: "ServerEncrypted", type: .bool),
        ArrowField(name: "CustomerProvidedKeySha256", type: .utf8), ArrowField(name: "EncryptionScope", type: .utf8),
        ArrowField(name: "CopyId", type: .utf8), ArrowField(name: "CopyStatus", type: .utf8), ArrowField(name: "CopySource", type: .utf8),
        ArrowField(name: "CopyProgress", type: .utf8), ArrowField(name: "CopyCompletionTime", type: .timestampMilliseconds),
        ArrowField(name: "IncrementalCopy", type: .bool), ArrowField(name: "CopyDestinationSnapshot", type: .utf8),
        ArrowField(name: "TagCount", type: .int64), ArrowField(name: "DeletedTime", type: .timestampMilliseconds),
        ArrowField(name: "RemainingRetentionDays", type: .int64), ArrowField(name: "HasVersionsOnly", type: .bool),
    ]

    /// One item of a page: a blob's entry, or a prefix.
    enum Row {
        case blob(BlobListingEntry)
        case prefix(String)
    }

    /// A page as a stream: the schema (with `NextMarker` when there is a next page), one batch of
    /// its rows, the end-of-stream marker.
    static func page(_ rows: [Row], metadata includeMetadata: Bool, tags includeTags: Bool, nextMarker: String?) -> Data {
        var fields = columns
        if includeMetadata { fields.append(ArrowField(name: "Metadata", type: .stringMap)) }
        if includeTags { fields.append(ArrowField(name: "Tags", type: .stringMap)) }
        let index = Dictionary(uniqueKeysWithValues: fields.enumerated().map { ($1.name, $0) })
        var cells = Array(repeating: [ArrowValue](repeating: .null, count: rows.count), count: fields.count)
        for (row, item) in rows.enumerated() {
            switch item {
            case .prefix(let name):
                cells[0][row] = .utf8(Array(name.utf8))
                cells[1][row] = .utf8(Array("blobprefix".utf8))
            case .blob(let entry):
                cells[0][row] = .utf8(Array(entry.name.utf8))
                cells[1][row] = .utf8(Array("blob".utf8))
                for (name, value) in entry.head + entry.properties {
                    // Every element a listing writes has its column (ArrowListingTests holds this).
                    guard let column = index[name] else { continue }
                    cells[column][row] = cell(value)
                }
                if entry.hasVersionsOnly { cells[index["HasVersionsOnly"]!][row] = .bool(true) }
                if let column = index["Metadata"] { cells[column][row] = map(entry.metadata ?? []) }
                if let column = index["Tags"] { cells[column][row] = map(entry.tags?.pairs ?? []) }
            }
        }
        let writer = ArrowStreamWriter(fields: fields, metadata: nextMarker.map { [("NextMarker", $0)] } ?? [])
        var out = writer.schema()
        out.append(writer.batch(rows: rows.count, columns: cells))
        out.append(ArrowStreamWriter.endOfStream)
        return out
    }

    static func cell(_ value: BlobListingEntry.Value) -> ArrowValue {
        switch value {
        case .text(let text): text.flatMap { $0.isEmpty ? nil : ArrowValue.utf8(Array($0.utf8)) } ?? .null
        case .integer(let n): .integer(n)
        case .flag(let b): .bool(b)
        // Whole seconds, as the XML listing's dates have them.
        case .time(let t): .integer(t.unixSeconds * 1000)
        }
    }

    private static func map(_ pairs: [(String, String)]) -> ArrowValue {
        .map(pairs.map { (key: Array($0.0.utf8), value: Array($0.1.utf8)) })
    }
}
