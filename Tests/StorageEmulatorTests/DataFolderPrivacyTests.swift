import AzseedTestSupport
import AzureStorage
import Foundation
import StorageEmulator
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Another user of the machine reads nothing of the emulator's data from disk (issue 45: user
/// `nobody` read private blob bytes and entities from a 0755 folder), and the emulator never
/// serves a data folder another user owns or may write.
@Suite struct DataFolderPrivacyTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        guard lstat(path, &info) == 0 else { return 0 }
        return info.st_mode
    }

    @Test func theDataFolderIsPrivateAndItsFilesReadableByTheOwnerAlone() async throws {
        let folder = try Scratch.folder("private").appendingPathComponent("data")
        try await TestEmulator.withRunning(dataDirectory: folder) { server in
            let blobs = BlobClient(account: server.account)
            try await blobs.createContainer("secret")
            try await blobs.putBlob(Data("private bytes".utf8), container: "secret", name: "a.txt")
            // A block list, so a composed object's folder and manifest are made too.
            try await blobs.putBlob(Data(repeating: 1, count: 64), container: "secret", name: "b.txt")
            let tables = TableClient(account: server.account)
            try await tables.createTable("secrets")
            _ = try await tables.insert(TableEntity(partitionKey: "p", rowKey: "r", properties: ["V": .string("private")]), into: "secrets")
        }
        #expect(Self.mode(folder.path) & 0o777 == 0o700, "the data folder is \(String(Self.mode(folder.path) & 0o777, radix: 8))")
        let files = FileManager.default.enumerator(atPath: folder.path)
        var checked = 0
        while let relative = files?.nextObject() as? String {
            let path = folder.appendingPathComponent(relative).path
            let mode = Self.mode(path)
            if mode & S_IFMT == S_IFREG {
                #expect(mode & 0o077 == 0, "\(relative) is \(String(mode & 0o777, radix: 8))")
                checked += 1
            }
        }
        #expect(checked >= 3, "no files were looked at")
    }

    @Test func aDataFolderOthersMayWriteOrAnotherUserOwnsIsRefused() async throws {
        let shared = try Scratch.folder("shared-data")
        chmod(shared.path, 0o777)
        await #expect {
            try await TestEmulator.withRunning(dataDirectory: shared) { _ in }
        } throws: { error in
            let text = "\(error)"
            return text.contains("users other than you may write to it") && text.contains(shared.path)
        }
        #expect(!FileManager.default.fileExists(atPath: shared.appendingPathComponent("storage.sqlite").path), "a refused folder was written")

        // One in a folder others may write is refused too: they could swap it while it is served.
        let inShared = shared.appendingPathComponent("data")
        await #expect {
            try await TestEmulator.withRunning(dataDirectory: inShared) { _ in }
        } throws: { error in "\(error)".contains("the data folder's parent") }
        #expect(!FileManager.default.fileExists(atPath: inShared.path))

        // As root (CI), a folder given to another user is refused too.
        guard geteuid() == 0 else { return }
        let theirs = try Scratch.folder("their-data")
        chown(theirs.path, 65534, 65534)
        await #expect {
            try await TestEmulator.withRunning(dataDirectory: theirs) { _ in }
        } throws: { error in "\(error)".contains("belongs to another user") }
    }

    /// A folder an older azseed made under a umask of 002 (group write for the user's own
    /// primary group, as on Ubuntu) is no one else's: taken, and made private.
    @Test func anOlderFolderIsMadePrivateWhenOpened() async throws {
        let folder = try Scratch.folder("older-data")
        chmod(folder.path, 0o775)
        chown(folder.path, geteuid(), getegid())
        try await TestEmulator.withRunning(dataDirectory: folder) { _ in }
        #expect(Self.mode(folder.path) & 0o777 == 0o700)
        #expect(Self.mode(folder.appendingPathComponent("storage.sqlite").path) & 0o077 == 0)
    }
}
