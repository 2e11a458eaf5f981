/// Names and numbers of the snapshot format (design §7).
public enum SnapshotFormat {
    public static let formatName = "azseed-snapshot"
    public static let version: Int64 = 1
    public static let manifestFile = "manifest.json"
    public static let tablesFolder = "tables"
    public static let blobsFolder = "blobs"

    /// The path of a table's entity file inside a snapshot.
    public static func tableFile(_ table: String) -> String { "\(tablesFolder)/\(table).jsonl" }

    /// The path of a blob inside a snapshot; nil when the name cannot be a safe relative
    /// path (empty, absolute, or with `.`/`..` segments), so no blob can escape the folder.
    public static func blobFile(container: String, blob: String) -> String? {
        let segments = blob.split(separator: "/", omittingEmptySubsequences: false)
        guard !blob.hasPrefix("/"), !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else { return nil }
        return "\(blobsFolder)/\(container)/\(blob)"
    }
}
