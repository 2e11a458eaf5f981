import Crypto
import Foundation

/// Names and numbers of the snapshot format (docs/FORMATS.md, snapshots).
public enum SnapshotFormat {
    public static let formatName = "azseed-snapshot"
    public static let version: Int64 = 1
    public static let manifestFile = "manifest.json"
    public static let tablesFolder = "tables"
    public static let blobsFolder = "blobs"
    /// Blobs whose names cannot be paths here live under `encoded/<container>/<sha256 of the
    /// name>`, and their manifest entry records the `file`.
    public static let encodedFolder = "encoded"

    /// The path of a table's entity file inside a snapshot.
    public static func tableFile(_ table: String) -> String { "\(tablesFolder)/\(table).jsonl" }

    /// The path of a blob inside a snapshot; nil when the name cannot be a safe relative
    /// path (empty, absolute, or with `.`/`..` segments), so no blob can escape the folder.
    /// The path of a blob whose name cannot be a file here — a name that is also the folder of
    /// another blob (`fd` and `fd/child`, both valid in Azure), a segment longer than a file
    /// name may be, `.`/`..`/empty segments: the SHA-256 of the name, hex.
    public static func encodedBlobFile(container: String, blob: String) -> String {
        let digest = SHA256.hash(data: Array(blob.utf8)).map { String(format: "%02x", $0) }.joined()
        return "\(encodedFolder)/\(container)/\(digest)"
    }

    /// Longest file name segment, in bytes, on the file systems snapshots are written to.
    static let maxSegmentBytes = 255

    public static func blobFile(container: String, blob: String) -> String? {
        let segments = blob.split(separator: "/", omittingEmptySubsequences: false)
        guard !blob.hasPrefix("/"), !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.utf8.count > maxSegmentBytes })
        else { return nil }
        return "\(blobsFolder)/\(container)/\(blob)"
    }
}
