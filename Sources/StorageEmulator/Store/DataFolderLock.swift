import Foundation
import StorageProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Who holds a data folder: read from its lock file by a process that could not take it.
public struct DataFolderOwner: Sendable, Equatable {
    public var pid: Int32
    /// The command that opened the folder, e.g. `azseed emulator` or `azseed plan`.
    public var command: String
    /// The endpoints it serves, once it listens.
    public var blobEndpoint: URL?
    public var tableEndpoint: URL?

    /// Whether it is an `azseed emulator` that other commands can talk to.
    public var isServing: Bool { command == DataFolderLock.emulatorCommand && blobEndpoint != nil && tableEndpoint != nil }
}

/// A data folder that another process owns.
public struct DataFolderBusy: Error, CustomStringConvertible, Sendable, PersonFacingError {
    public var folder: String
    public var owner: DataFolderOwner?

    public var phrase: Phrase {
        guard let owner else {
            return
                "\(folder) is in use by another process; one process owns a data folder at a time — wait for it to finish, or serve the folder with '\(Setting.emulatorCommand)' and point commands at it"
        }
        if owner.isServing, let blob = owner.blobEndpoint {
            return
                "\(folder) is already served by 'azseed emulator' (pid \(owner.pid)) at \(blob.absoluteString); use that emulator, or stop it first"
        }
        return
            "\(folder) is in use by '\(owner.command)' (pid \(owner.pid)); one process owns a data folder at a time — wait for it to finish, or run '\(Setting.emulatorCommand)' on the folder so every command shares it"
    }
}

/// The exclusive lock that makes one process the owner of a data folder.
///
/// Two processes on one folder lost data: the embedded storage's start-up sweep deleted blob
/// files the other process had just committed. So the emulator and the embedded storage take
/// `flock(LOCK_EX)` on `<folder>/owner.lock` before opening anything, and write who they are
/// (and, once listening, their endpoints) into it. The kernel drops the lock when the process
/// ends, however it ends, so a crash never leaves a stale owner.
final class DataFolderLock: Sendable {
    static let fileName = "owner.lock"
    static let emulatorCommand = "azseed emulator"

    private let descriptor: Mutex<Int32>
    private let command: String

    /// Takes the folder (creating it) or throws `DataFolderBusy` naming the owner.
    init(folder: URL, command: String) throws {
        do {
            // Private to this user whatever the umask: blob bytes and entities are read
            // straight from disk by anyone who can enter the folder.
            // And in a folder no one else may write: they could rename it away while it is served
            // and put one of theirs in its place.
            if let problem = PrivateFolder.parentProblem(folder.deletingLastPathComponent()) {
                throw PrivateFolderError(folder: folder.deletingLastPathComponent().path, role: "the data folder's parent", problem: problem)
            }
            try PrivateFolder.make(folder, role: "data folder")
        } catch let error as PrivateFolderError where error.problem == PrivateFolder.notAFolder {
            throw EmulatorStartError(phrase: "data folder \(folder.path): \(error.problem); pass another \(Setting.dataFolder)")
        } catch let error as PrivateFolderError {
            throw EmulatorStartError(phrase: "\(error.description), or pass another \(Setting.dataFolder)")
        } catch {
            // Foundation's text names neither the folder nor the option it came from.
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder)
            let why =
                exists && !isFolder.boolValue
                ? "it is a file, not a folder" : "it cannot be created here (a part of the path is a file, or no permission)"
            throw EmulatorStartError(phrase: "data folder \(folder.path): \(why); pass another \(Setting.dataFolder)")
        }
        let path = folder.appendingPathComponent(Self.fileName).path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw EmulatorStartError(phrase: "cannot open \(path): \(String(cString: strerror(errno))); check the folder's permissions")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            guard code == EWOULDBLOCK else {
                // Not held by anyone: the file system cannot lock (some network mounts).
                close(fd)
                throw EmulatorStartError(
                    phrase: "cannot lock \(path): \(String(cString: strerror(code))); keep the data folder on a local file system")
            }
            let owner = Self.readOwner(fd)
            close(fd)
            throw DataFolderBusy(folder: folder.relativePath, owner: owner)
        }
        descriptor = Mutex(fd)
        self.command = command
        write(blob: nil, table: nil)
    }

    /// Records the endpoints, so a second command can talk to this process instead.
    func write(blob: URL?, table: URL?) {
        var text = "pid=\(getpid())\ncommand=\(command)\n"
        if let blob, let table { text += "blob=\(blob.absoluteString)\ntable=\(table.absoluteString)\n" }
        let bytes = Array(text.utf8)
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = ftruncate(fd, 0)
            _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        }
    }

    /// Gives the folder up; later calls do nothing.
    func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = ftruncate(fd, 0)
            close(fd)  // closing drops the flock
            fd = -1
        }
    }

    deinit { release() }

    private static func readOwner(_ fd: Int32) -> DataFolderOwner? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        var fields: [String: String] = [:]
        for line in String(decoding: buffer[..<n], as: UTF8.self).split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        guard let pid = fields["pid"].flatMap({ Int32($0) }), let command = fields["command"] else { return nil }
        return DataFolderOwner(
            pid: pid, command: command, blobEndpoint: fields["blob"].flatMap(URL.init(string:)),
            tableEndpoint: fields["table"].flatMap(URL.init(string:)))
    }
}
