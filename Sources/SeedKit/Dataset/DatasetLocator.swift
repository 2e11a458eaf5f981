import AzureStorage
import Foundation

/// Finds the datasets shipped with azseed from any working directory.
public enum DatasetLocator {
    /// The default dataset's folder name below `Seeds/`.
    public static let defaultName = "speakeasy"

    /// The folder of the default dataset: `$AZSEED_HOME/Seeds/speakeasy`, else the nearest
    /// `Seeds/speakeasy` above the executable (a build folder inside the repository), else
    /// `<prefix>/share/azseed/Seeds/speakeasy` beside an installed executable, else the
    /// working directory's `Seeds/speakeasy`, else the copy compiled into the binary
    /// (``EmbeddedDataset``), written out to the cache folder.
    public static func defaultDataset(executable: String = CommandLine.arguments[0]) throws -> URL {
        let relative = "Seeds/\(defaultName)"
        let fm = FileManager.default
        if let home = ProcessInfo.processInfo.environment["AZSEED_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home).appendingPathComponent(relative)
        }
        // A bare `azseed` (found on PATH) names no folder: the walk would start from the working
        // directory and reach any `/tmp/Seeds`. The running binary's own path is asked instead.
        let path = executable.contains("/") ? executable : (try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? executable
        let exe = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        for _ in 0..<8 {
            for candidate in [dir.appendingPathComponent(relative), dir.appendingPathComponent("share/azseed/\(relative)")]
            where fm.fileExists(atPath: candidate.appendingPathComponent("dataset.yaml").path) {
                // Found beside the binary: a checkout or an installation, this user's or root's;
                // one someone else could write (a binary unpacked under /tmp) is passed over.
                if untrusted(candidate) == nil { return candidate }
            }
            let parent = dir.deletingLastPathComponent()
            if parent.path == dir.path { break }
            dir = parent
        }
        let local = URL(fileURLWithPath: fm.currentDirectoryPath).appendingPathComponent(relative)
        if fm.fileExists(atPath: local.appendingPathComponent("dataset.yaml").path) {
            // A shared working directory (a sticky /tmp) may hold a Seeds/speakeasy someone else
            // put there: it would decide what apply writes. Used only when it is this user's.
            if let problem = untrusted(local) {
                throw DatasetError(
                    file: local.path, line: nil,
                    "the working directory's \(relative) \(problem); pass \(Setting.dataset) to choose a dataset, or run from a folder of your own")
            }
            return local
        }
        return try EmbeddedDataset.extracted()
    }

    /// Why a dataset found by looking (not named) is not this user's to trust, or nil: it,
    /// `Seeds` or its `dataset.yaml` belongs to another user (not root), or others may write
    /// to them.
    static func untrusted(_ dataset: URL) -> String? {
        for folder in [dataset, dataset.deletingLastPathComponent()] {
            if let problem = PrivateFolder.parentProblem(folder) { return "cannot be trusted (\(folder.lastPathComponent): \(problem))" }
        }
        var info = stat()
        if lstat(dataset.appendingPathComponent("dataset.yaml").path, &info) == 0, info.st_uid != geteuid() && info.st_uid != 0 {
            return "cannot be trusted (its dataset.yaml belongs to another user, uid \(info.st_uid))"
        }
        return nil
    }
}
