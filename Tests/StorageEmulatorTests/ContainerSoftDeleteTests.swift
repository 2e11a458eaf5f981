import AzureStorage
import Foundation
import Testing

@testable import StorageEmulator

/// Container soft delete's bookkeeping: a deleted container's rows move under a name no request
/// can spell and back on restore; once its retention has passed it is gone for good, bytes and
/// all; versions of one name deleted in one tick differ.
@Suite struct ContainerSoftDeleteTests {
    @Test func retentionEndsInRemoval() async throws {
        let store = try EmulatorStore(dataDirectory: nil, containerRetentionDays: 2)
        _ = try await store.createContainer("kept", access: "", metadata: [])
        try await store.deleteContainer("kept")
        var (listed, _) = try await store.listContainers(prefix: "", marker: "", limit: 10, deleted: true)
        let version = try #require(listed.first { $0.deleted?.name == "kept" }?.deleted?.version)
        #expect(listed.allSatisfy { $0.name.unicodeScalars.first?.value == 1 || $0.deleted == nil })
        // A day on: still there. Three days on: removed.
        let deletedAt = try #require(listed.first { $0.deleted?.name == "kept" }?.deleted?.at)
        let oneDay: Int64 = 864_000_000_000
        let purgedEarly = try await store.write { db in
            try EmulatorStore.purgeDeletedContainers(now: EdmDateTime(ticks: deletedAt.ticks + oneDay), db)
        }
        #expect(purgedEarly.isEmpty)
        (listed, _) = try await store.listContainers(prefix: "", marker: "", limit: 10, deleted: true)
        #expect(listed.contains { $0.deleted?.version == version })
        _ = try await store.write { db in
            try EmulatorStore.purgeDeletedContainers(now: EdmDateTime(ticks: deletedAt.ticks + 3 * oneDay), db)
        }
        (listed, _) = try await store.listContainers(prefix: "", marker: "", limit: 10, deleted: true)
        #expect(!listed.contains { $0.deleted != nil })
        await #expect(throws: ServiceError.self) { _ = try await store.restoreContainer("kept", deletedName: "kept", version: version) }
    }

    @Test func deletionsInOneTickGetVersionsOfTheirOwn() async throws {
        let store = try EmulatorStore(dataDirectory: nil, containerRetentionDays: 1)
        let now = EdmDateTime(ticks: 638_000_000_000_000_000)
        try await store.write { db in
            for _ in 0..<3 {
                try db.execute(
                    sql: "INSERT INTO containers (name, access, created, modified, etag, metadata) VALUES ('twice', '', 0, 0, '\"0x1\"', '[]')")
                try EmulatorStore.softDeleteContainer("twice", now: now, days: 1, db)
            }
        }
        let (listed, _) = try await store.listContainers(prefix: "twice", marker: "", limit: 10, deleted: true)
        #expect(Set(listed.compactMap { $0.deleted?.version }).count == 3)
        #expect(EmulatorStore.containerVersion(now).count == 16)
    }
}
