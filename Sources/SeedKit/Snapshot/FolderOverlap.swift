import AzureStorage
import Foundation

/// Refuses an output folder that would replace its own input.
///
/// `--force` replaces `--out` wholesale, so an `--out` that is, contains or sits inside the
/// folder being read (the embedded storage's data folder, the dataset folder, a snapshot)
/// would delete that input after reading it. Paths are compared after resolving symbolic
/// links and `..`, on the part of the path that exists.
public enum FolderOverlap {
    /// Throws a usage error naming `what` when `output` and any of `inputs` overlap.
    public static func check(output: URL, setting flag: Setting = .outputFolder, inputs: [(what: String, folder: URL)]) throws(GenerationError) {
        let out = resolved(output)
        for input in inputs {
            let folder = resolved(input.folder)
            let relation: String
            if out.count == folder.count && zip(out, folder).allSatisfy({ $0.utf8.elementsEqual($1.utf8) }) {
                relation = "is"
            } else if isInside(out, folder) {
                relation = "is inside"
            } else if isInside(folder, out) {
                relation = "contains"
            } else {
                continue
            }
            throw GenerationError(
                usage: true,
                "\(flag) \(output.relativePathForMessages) \(relation) \(input.what) \(input.folder.relativePathForMessages); writing there would replace what is being read — choose another \(flag)"
            )
        }
    }

    /// Whether `folder` is a storage data folder (the emulator's or the embedded storage's),
    /// wherever it is: it has an owner lock, or the database beside a `blobs` folder (a folder
    /// written before locks existed).
    public static func isDataFolder(_ folder: URL) -> Bool {
        let fm = FileManager.default
        return fm.fileExists(atPath: folder.appendingPathComponent("owner.lock").path)
            || (fm.fileExists(atPath: folder.appendingPathComponent("storage.sqlite").path)
                && fm.fileExists(atPath: folder.appendingPathComponent("blobs").path))
    }

    /// Throws a usage error when `output` is, sits inside or contains any storage data folder
    /// — not only the default one: `--force` over a folder a running `azseed emulator --data-dir`
    /// serves would delete its database under it.
    public static func checkNoDataFolder(output: URL, setting flag: Setting = .outputFolder) throws(GenerationError) {
        let fm = FileManager.default
        var folder = output.standardizedFileURL
        while true {
            if isDataFolder(folder) {
                let relation = folder.path == output.standardizedFileURL.path ? "is" : "is inside"
                throw GenerationError(
                    usage: true,
                    "\(flag) \(output.relativePathForMessages) \(relation) the storage data folder \(folder.relativePathForMessages); writing there would destroy it — choose another \(flag)"
                )
            }
            if folder.pathComponents.count <= 1 { break }
            folder.deleteLastPathComponent()
        }
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: output.path, isDirectory: &isDirectory), isDirectory.boolValue,
            let walker = fm.enumerator(at: output, includingPropertiesForKeys: nil)
        else { return }
        for case let url as URL in walker
        where ["owner.lock", "storage.sqlite"].contains(url.lastPathComponent)
            && isDataFolder(url.deletingLastPathComponent())
        {
            let found = url.deletingLastPathComponent()
            throw GenerationError(
                usage: true,
                "\(flag) \(output.relativePathForMessages) contains the storage data folder \(found.relativePathForMessages); writing there would destroy it — choose another \(flag)"
            )
        }
    }

    /// Path components compared as bytes: file systems compare names that way, not by
    /// Unicode canonical equivalence.
    private static func isInside(_ inner: [String], _ outer: [String]) -> Bool {
        inner.count > outer.count && zip(inner, outer).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
    }

    /// The absolute path as components, symbolic links resolved on its existing prefix.
    static func resolved(_ url: URL) -> [String] {
        var existing = url.standardizedFileURL
        var missing: [String] = []
        while !FileManager.default.fileExists(atPath: existing.path) && existing.pathComponents.count > 1 {
            missing.insert(existing.lastPathComponent, at: 0)
            existing.deleteLastPathComponent()
        }
        return existing.resolvingSymlinksInPath().pathComponents + missing
    }
}
