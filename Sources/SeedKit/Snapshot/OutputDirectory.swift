import AzureStorage
import Foundation

/// Writes a directory all at once: files go to a hidden sibling folder that replaces the
/// destination only when everything has been written, so a failure leaves nothing behind.
struct OutputDirectory {
    let destination: URL
    let staging: URL

    /// Refuses a destination that exists and is not an empty folder unless `force` is set.
    init(_ destination: URL, force: Bool) throws(GenerationError) {
        self.destination = destination.standardizedFileURL
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: self.destination.path, isDirectory: &isDir) {
            guard isDir.boolValue else {
                throw GenerationError(
                    usage: true, "\(self.destination.relativePathForMessages) exists and is not a folder; choose another \(Setting.outputFolder)")
            }
            // A folder someone else owns, or may write, would let them read the snapshot or swap
            // its files: refused whatever it holds.
            if let problem = PrivateFolder.problem(self.destination) {
                throw GenerationError("\(self.destination.relativePathForMessages): \(problem); choose another \(Setting.outputFolder) of your own")
            }
            let contents = (try? fm.contentsOfDirectory(atPath: self.destination.path)) ?? []
            if !contents.isEmpty && !force {
                throw GenerationError(
                    usage: true,
                    "\(self.destination.relativePathForMessages) exists and is not empty; choose another \(Setting.outputFolder) or pass \(Setting.replaceOutput) to replace it"
                )
            }
        }
        let parent = self.destination.deletingLastPathComponent()
        // The snapshot is made beside the output and renamed into place: a parent someone else
        // may write would let them rename it away and put theirs there.
        if let problem = PrivateFolder.parentProblem(parent) {
            throw GenerationError(
                "\(parent.relativePathForMessages), the folder \(self.destination.lastPathComponent) is written in: \(problem); choose another \(Setting.outputFolder)"
            )
        }
        var parentIsDir: ObjCBool = false
        guard fm.fileExists(atPath: parent.path, isDirectory: &parentIsDir) else {
            throw GenerationError(
                usage: true, "\(parent.relativePathForMessages) does not exist; create it or choose another \(Setting.outputFolder)")
        }
        guard parentIsDir.boolValue else {
            throw GenerationError(usage: true, "\(parent.relativePathForMessages) is a file, not a folder; choose another \(Setting.outputFolder)")
        }
        staging = parent.appendingPathComponent(".\(self.destination.lastPathComponent).azseed-\(ProcessInfo.processInfo.processIdentifier)")
        try? fm.removeItem(at: staging)
        do {
            // Made private (0700) before anything is written into it: what it holds is the data
            // of an account, and the folder becomes the output as it is.
            try fm.createDirectory(at: staging, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw GenerationError("cannot create \(staging.relativePathForMessages): \(FileProblem.describe(error)); check the folder's permissions")
        }
    }

    /// The staging URL of a relative path, with its parent folders created.
    func file(_ relative: String) throws -> URL {
        let url = staging.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        return url
    }

    /// Moves the staging folder into place.
    func commit() throws {
        let fm = FileManager.default
        if fm.fileExists(atPath: destination.path) { try fm.removeItem(at: destination) }
        try fm.moveItem(at: staging, to: destination)
    }

    /// Removes the staging folder after a failure.
    func discard() { try? FileManager.default.removeItem(at: staging) }
}
