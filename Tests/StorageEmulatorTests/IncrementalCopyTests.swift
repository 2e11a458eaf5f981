import AzureStorage
import Foundation
import Testing

@testable import StorageEmulator

/// An incremental copy a stop left pending (its pages copied, its snapshot not yet made) is
/// finished when the emulator starts again: success, and the snapshot it names exists.
@Suite struct IncrementalCopyTests {
    @Test func aPendingCopyIsFinishedOnResume() async throws {
        let store = try EmulatorStore(dataDirectory: nil)
        _ = try await store.createContainer("c", access: "", metadata: [])
        var info = CopyInfo(id: "copy-1", source: "http://h/a/c/disk?snapshot=2026-01-01T00:00:00.0000000Z", bytes: 512, completed: store.clock.now())
        info.status = "pending"
        info.incremental = true
        _ = try await store.commitBlob(
            container: "c", name: "backup", dataID: "", size: 512, blocks: [],
            properties: BlobHTTPProperties(contentType: "application/octet-stream"),
            metadata: [], conditions: WriteConditions(), copy: info, type: .page)
        #expect(try await store.pendingIncrementalCopies().map(\.id) == ["copy-1"])
        await BlobService(store: store, account: "a").resumeIncrementalCopies()
        let (_, blob) = try await store.blob("c", "backup")
        let copy = try #require(blob?.copy)
        #expect(copy.status == "success")
        let snapshot = try #require(copy.destinationSnapshot)
        let (_, taken) = try await store.blob("c", "backup", snapshot: snapshot, versionId: nil)
        #expect(taken?.size == 512)
        #expect(try await store.pendingIncrementalCopies().isEmpty)
    }
}
