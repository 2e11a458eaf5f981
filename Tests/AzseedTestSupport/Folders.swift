import Crypto
import Foundation

/// Folder digests and the golden values tests pin them to.
public enum Folders {
    /// SHA-256 over every file of a folder: sorted relative paths, each followed by its bytes.
    public static func hash(_ folder: URL) throws -> String {
        let base = folder.standardizedFileURL.path
        var paths: [String] = []
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])!
        for case let url as URL in walker where (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true {
            paths.append(String(url.standardizedFileURL.path.dropFirst(base.count + 1)))
        }
        var hasher = SHA256()
        for path in paths.sorted() {
            hasher.update(data: Data(path.utf8))
            hasher.update(data: Data([0]))
            hasher.update(data: try Data(contentsOf: folder.appendingPathComponent(path)))
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// The digest of `azseed generate --seed 42 --from 2026-01-01 --to 2026-07-01` of the
    /// SpeakEasy dataset: the determinism contract, pinned.
    public static let speakEasySeed42 = "6dbc2f65aeced8bc77b08329eaf8f96429617ee913f7046982af4d74d8fe3ba4"
}
