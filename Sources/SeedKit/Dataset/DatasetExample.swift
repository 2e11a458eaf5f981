import Foundation

/// The example datasets `azseed init` writes to start from: a folder with `dataset.yaml`
/// (commented, explaining each generator), `templates/` and, for SpeakEasy, `images/` — the
/// repository's `Seeds/<name>`, as compiled into the binary (``EmbeddedDataset``).
public enum DatasetExample: String, CaseIterable, Sendable {
    /// The SpeakEasy app's speakers, photos and events (the default dataset).
    case speakeasy
    /// Rooms, users and messages of a chat app: three tables, typed numbers, two references.
    case chat

    /// The files of the example, by their path inside the new folder.
    public var files: [(path: String, bytes: Data)] {
        let seeds = "Seeds/\(rawValue)/"
        return EmbeddedDataset.files.compactMap { file -> (String, Data)? in
            guard file.path.hasPrefix(seeds) else { return nil }
            return (String(file.path.dropFirst(seeds.count)), EmbeddedDataset.bytes(file.base64))
        }
    }

    /// Writes the example into `folder`, which must not exist or be empty; returns the paths
    /// written. Nothing is left behind when writing fails half-way.
    @discardableResult
    public func write(to folder: URL) throws -> [String] {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        let existed = fm.fileExists(atPath: folder.path, isDirectory: &isDirectory)
        if existed {
            guard isDirectory.boolValue else {
                throw DatasetError(file: folder.path, line: nil, "is a file; azseed init writes a dataset into a new or empty folder")
            }
            let entries = (try? fm.contentsOfDirectory(atPath: folder.path)) ?? []
            guard entries.isEmpty else {
                throw DatasetError(
                    file: folder.path, line: nil,
                    "is not empty (\(entries.count) entries); azseed init writes into a new or empty folder, so nothing of yours is overwritten")
            }
        }
        let files = self.files
        do {
            for (path, bytes) in files {
                let url = folder.appendingPathComponent(path)
                try fm.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try bytes.write(to: url, options: .withoutOverwriting)
            }
        } catch {
            if existed {
                for entry in (try? fm.contentsOfDirectory(atPath: folder.path)) ?? [] { try? fm.removeItem(at: folder.appendingPathComponent(entry)) }
            } else {
                try? fm.removeItem(at: folder)
            }
            throw DatasetError(file: folder.path, line: nil, "cannot be written (\(FileProblem.describe(error))); choose a folder you can write to")
        }
        return files.map(\.path).sorted()
    }
}
