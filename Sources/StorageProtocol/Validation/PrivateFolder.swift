import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A folder that holds what only its owner may read: an emulator's data folder, a backup, an
/// export. Made `0700` whatever the umask; an existing one must belong to this user and be
/// writable by no one else (group write only for the user's own primary group) — otherwise another local user could read what is written there, or
/// swap what is read back (docs/SECURITY.md, "Another user of the machine").
public enum PrivateFolder {
    /// What ``problem(_:)`` says of a path that is a file.
    public static let notAFolder = "it is a file, not a folder"

    /// Why `folder` cannot be used as a private folder, or nil when it can (or does not exist
    /// yet). Follows no link at the folder itself: a link is judged by where it leads.
    public static func problem(_ folder: URL) -> String? {
        var info = stat()
        guard stat(folder.path, &info) == 0 else { return nil }
        guard info.st_mode & S_IFMT == S_IFDIR else { return Self.notAFolder }
        if info.st_uid != geteuid() {
            return "it belongs to another user (uid \(info.st_uid)), who could read or change what is written there"
        }
        // Group write is someone else's only when the group is not this user's own primary
        // group (a umask of 002 gives every folder group write for the user's private group).
        let othersWrite = info.st_mode & 0o002 != 0 || (info.st_mode & 0o020 != 0 && info.st_gid != getegid())
        if othersWrite {
            return "users other than you may write to it (mode \(String(info.st_mode & 0o7777, radix: 8))), and so swap what is written there"
        }
        return nil
    }

    /// Why `folder` cannot hold a private folder of this user's, or nil: a folder another user
    /// (not root) owns, or others may write without the sticky bit, would let them rename the
    /// private folder away and put their own in its place. `/tmp` (root's, sticky) may.
    public static func parentProblem(_ folder: URL) -> String? {
        var info = stat()
        guard stat(folder.path, &info) == 0 else { return nil }
        // Not a folder: what is made in it fails, and says so, where it is made.
        guard info.st_mode & S_IFMT == S_IFDIR else { return nil }
        if info.st_uid != geteuid() && info.st_uid != 0 {
            return "it belongs to another user (uid \(info.st_uid)), who could replace what azseed keeps there"
        }
        let sticky = info.st_mode & S_ISVTX != 0
        if !sticky && (info.st_mode & 0o002 != 0 || (info.st_mode & 0o020 != 0 && info.st_gid != getegid())) {
            return "users other than you may write to it (mode \(String(info.st_mode & 0o7777, radix: 8))), and so replace what azseed keeps there"
        }
        return nil
    }

    /// Creates `folder` (and any missing parent, parents as the umask makes them) as `0700`, or
    /// checks the existing one (``problem(_:)``) and, with `tighten`, takes read and search from
    /// group and others (a data folder an older azseed made `0755`). Throws
    /// ``PrivateFolderError`` naming `role` (`data folder`, `--backup`).
    public static func make(_ folder: URL, role: String, tighten: Bool = true) throws {
        if let problem = problem(folder) { throw PrivateFolderError(folder: folder.path, role: role, problem: problem) }
        var info = stat()
        if stat(folder.path, &info) == 0 {
            if tighten && info.st_mode & 0o077 != 0 { _ = chmod(folder.path, info.st_mode & 0o700) }
            return
        }
        try FileManager.default.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard mkdir(folder.path, 0o700) == 0 || errno == EEXIST else {
            throw PrivateFolderError(folder: folder.path, role: role, problem: "it cannot be created (\(String(cString: strerror(errno))))")
        }
        // mkdir applies the umask: a umask of 0 still leaves it 0700, one of 0777 would leave it
        // unusable by its owner, so the mode is set outright.
        _ = chmod(folder.path, 0o700)
        if let problem = problem(folder) { throw PrivateFolderError(folder: folder.path, role: role, problem: problem) }
    }
}

/// A folder that is not private to this user: one line naming it and what to do.
public struct PrivateFolderError: Error, CustomStringConvertible, Sendable {
    public let folder: String
    public let role: String
    public let problem: String

    public init(folder: String, role: String, problem: String) {
        self.folder = folder
        self.role = role
        self.problem = problem
    }

    public var description: String {
        "\(role) \(folder): \(problem); use a folder of your own that only you can write (mkdir -m 700)"
    }
}
