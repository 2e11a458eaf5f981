import AzseedTestSupport
import AzureStorage
import Foundation
import SeedKit
import SeedRunner
import Synchronization
import Testing

/// A blob move, and its undo, beside an application that writes the same blobs: what the
/// application wrote is never replaced (issue 45). A destination that already holds other
/// bytes is a conflict the plan shows and apply refuses before its first write; one written
/// while the move runs stops the move at that blob, the application's bytes kept.
@Suite struct MigrationBlobConflictTests {
    static let move = [
        "V1__move.yaml":
            "description: move\noperations:\n  - move-blobs: {container: speakers, prefix: \"\", to-container: photos, to-prefix: \"2026/\"}\n"
    ]

    static func seed(_ blobs: BlobClient) async throws {
        try await blobs.createContainer("speakers", access: .blob)
        for name in ["a.jpg", "b.jpg", "c.jpg"] {
            try await blobs.putBlob(Data(name.utf8), container: "speakers", name: name, options: BlobUploadOptions(contentType: "image/jpeg"))
        }
    }

    /// A hook that runs `write` just before the `n`-th blob the step changes.
    static func atChange(_ n: Int, _ write: @escaping @Sendable () async throws -> Void) -> @Sendable () async throws -> Void {
        let changes = Changes()
        return {
            if changes.count.withLock({
                $0 += 1
                return $0
            }) == n {
                try await write()
            }
        }
    }

    final class Changes: Sendable {
        let count = Mutex(0)
    }

    static func names(_ blobs: BlobClient, _ container: String) async throws -> [String] {
        var names: [String] = []
        for try await page in blobs.list(container: container) { names += page.map(\.name) }
        return names
    }

    @Test func aDestinationHoldingOtherBytesIsAConflictThePlanShowsAndApplyRefuses() async throws {
        try await TestEmulator.withRunning { server in
            let blobs = BlobClient(account: server.account)
            try await Self.seed(blobs)
            try await blobs.createContainer("photos")
            try await blobs.putBlob(Data("the app's".utf8), container: "photos", name: "2026/b.jpg")
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(Self.move))

            let (_, plan) = try await migrator.plan()
            #expect(plan[0].operations[0].failures == 1)
            #expect(plan[0].operations[0].firstFailure?.contains("photos/2026/b.jpg already holds other bytes") == true)

            await #expect {
                _ = try await migrator.apply()
            } throws: { error in
                let text = (error as? RunError)?.phrase.description ?? ""
                return text.contains("already holds other bytes") && text.contains("nothing was moved")
            }
            #expect(try await Self.names(blobs, "speakers") == ["a.jpg", "b.jpg", "c.jpg"], "a refused move moved")
            #expect(try await Self.names(blobs, "photos") == ["2026/b.jpg"])
            #expect(try await blobs.download(container: "photos", name: "2026/b.jpg") == Data("the app's".utf8))
        }
    }

    /// The attacker's F1: other bytes of the same length at the destination, their Content-MD5
    /// property set to the source's, once passed for this move's own copy — the source was
    /// deleted and only their bytes were left. The bytes are read and hashed now.
    @Test func aDestinationWhoseContentMD5IsForgedIsStillAConflict() async throws {
        try await TestEmulator.withRunning { server in
            let blobs = BlobClient(account: server.account)
            try await Self.seed(blobs)
            try await blobs.createContainer("photos")
            let source = try #require(try await blobs.properties(container: "speakers", name: "b.jpg"))
            try await blobs.putBlob(
                Data("B.JPG".utf8), container: "photos", name: "2026/b.jpg", options: BlobUploadOptions(contentType: "image/jpeg"))
            var forged = BlobUploadOptions(contentType: "image/jpeg")
            forged.cacheControl = source.cacheControl
            try await blobs.setProperties(container: "photos", name: "2026/b.jpg", options: forged, md5: source.contentMD5, etag: "*")
            let planted = try #require(try await blobs.properties(container: "photos", name: "2026/b.jpg"))
            #expect(planted.contentMD5 == source.contentMD5 && planted.contentLength == source.contentLength)
            let migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(Self.move))
            await #expect(throws: RunError.self) { _ = try await migrator.apply() }
            #expect(try await blobs.download(container: "speakers", name: "b.jpg") == Data("b.jpg".utf8), "the only copy was deleted")
            #expect(try await blobs.download(container: "photos", name: "2026/b.jpg") == Data("B.JPG".utf8))
        }
    }

    @Test func aDestinationWrittenWhileTheMoveRunsIsKept() async throws {
        try await TestEmulator.withRunning { server in
            let blobs = BlobClient(account: server.account)
            try await Self.seed(blobs)
            var migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(Self.move))
            // The application writes b.jpg's destination just before the move reaches b.jpg.
            migrator.beforeCheckpoint = Self.atChange(2) { try await blobs.putBlob(Data("the app's".utf8), container: "photos", name: "2026/b.jpg") }
            await #expect {
                _ = try await migrator.apply()
            } throws: { error in
                ((error as? RunError)?.phrase.description ?? "").contains("was written by someone else while speakers/b.jpg was moved there")
            }
            #expect(try await blobs.download(container: "photos", name: "2026/b.jpg") == Data("the app's".utf8), "the app's blob was replaced")
            #expect(try await Self.names(blobs, "speakers") == ["b.jpg", "c.jpg"], "the source of a move that did not copy was deleted")
        }
    }

    @Test func undoNeverMovesABlobBackOverOneWrittenMeanwhile() async throws {
        try await TestEmulator.withRunning { server in
            let blobs = BlobClient(account: server.account)
            try await Self.seed(blobs)
            var migrator = Migrator(target: RunTarget(location: .account(server.account)), folder: try MigratorTests.folder(Self.move))
            _ = try await migrator.apply()
            #expect(try await Self.names(blobs, "speakers").isEmpty)

            // Before the undo: the app wrote a.jpg where it was; undo refuses whole.
            try await blobs.putBlob(Data("new a".utf8), container: "speakers", name: "a.jpg")
            let version = MigrationVersion("1")!
            await #expect(throws: RunError.self) { _ = try await migrator.undo(to: version) }
            #expect(try await Self.names(blobs, "photos") == ["2026/a.jpg", "2026/b.jpg", "2026/c.jpg"], "a refused undo moved")
            #expect(try await blobs.download(container: "speakers", name: "a.jpg") == Data("new a".utf8))

            // While the undo runs: the app writes c.jpg where undo is about to put it back.
            try await blobs.deleteBlob(container: "speakers", name: "a.jpg")
            migrator.beforeCheckpoint = Self.atChange(3) { try await blobs.putBlob(Data("new c".utf8), container: "speakers", name: "c.jpg") }
            await #expect(throws: RunError.self) { _ = try await migrator.undo(to: version) }
            #expect(try await blobs.download(container: "speakers", name: "c.jpg") == Data("new c".utf8), "undo replaced the app's blob")
            #expect(try await Self.names(blobs, "photos") == ["2026/c.jpg"], "undo deleted a blob it did not put back")
        }
    }
}
