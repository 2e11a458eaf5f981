import AzseedTestSupport
import Foundation
import StorageEmulator
import Testing

@testable import AzureStorage

/// One client cannot stall the others (issue 45): Put Block Lists that name one staged block
/// hundreds of times, four at once (what a SAS holder with `c` and `w` may send), are
/// concatenated a few MiB per job on the shared blocking threads, so another client's small
/// upload and read go on between; and a committed blob is bounded
/// (``EmulatorConfiguration/maxCommittedBlobBytes``) before a byte of it is written.
@Suite(.serialized) struct FairnessTests {
    static let blockID = Data("block-0".utf8).base64EncodedString()

    static func stage(_ blobs: BlobClient, _ name: String, bytes: Int) async throws {
        let request = blobs.pipeline.request(
            "PUT", blobs.path("cont", name), query: [("comp", "block"), ("blockid", blockID)], body: Data(repeating: 7, count: bytes))
        _ = try await blobs.pipeline.send(request, operation: "Put Block", expected: [201])
    }

    static func commit(_ blobs: BlobClient, _ name: String, repeats: Int) async throws {
        let xml =
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>" + String(repeating: "<Latest>\(blockID)</Latest>", count: repeats)
            + "</BlockList>"
        let request = blobs.pipeline.request("PUT", blobs.path("cont", name), query: [("comp", "blocklist")], body: Data(xml.utf8))
        _ = try await blobs.pipeline.send(request, operation: "Put Block List", expected: [201])
    }

    @Test func hostileBlockListsDoNotStallAnotherClientsSmallWrites() async throws {
        let folder = try Scratch.folder("fairness")
        try await TestEmulator.withRunning(dataDirectory: folder) { server in
            let blobs = BlobClient(account: server.account)
            try await blobs.createContainer("cont")
            for i in 0..<4 { try await Self.stage(blobs, "hostile-\(i)", bytes: 1 << 20) }
            let hostile = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<4 { group.addTask { try await Self.commit(blobs, "hostile-\(i)", repeats: 300) } }
                    try await group.waitForAll()
                }
            }
            // Another client: a 1 KiB upload and its read, again and again while they commit.
            var worst: Duration = .zero
            var samples = 0
            let clock = ContinuousClock()
            try await Task.sleep(for: .milliseconds(50))
            while samples < 200 {
                let started = clock.now
                try await blobs.putBlob(Data(repeating: 1, count: 1024), container: "cont", name: "small-\(samples)")
                _ = try await blobs.download(container: "cont", name: "small-\(samples)")
                worst = max(worst, clock.now - started)
                samples += 1
                if samples >= 5, await Self.finished(hostile) { break }
            }
            try await hostile.value
            print("fairness: the worst 1 KiB upload and read took \(worst) over \(samples) samples while four hostile commits ran")
            #expect(try await blobs.properties(container: "cont", name: "hostile-0")?.contentLength == 300 << 20)
            // Release builds measure well under 100 ms (Benchmarks/RESULTS.md); a debug build on a
            // busy 2-core machine is given more. One whole 300 MiB concatenation per thread took
            // seconds here before the commits were stepped.
            #expect(worst < .milliseconds(600), "a 1 KiB upload and read took \(worst) while four hostile commits ran (\(samples) samples)")
        }
    }

    static func finished(_ task: Task<Void, any Error>) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                _ = await task.result
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(1))
                return false
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
    }

    @Test func aBlockListPastTheCommittedBoundIsRefusedBeforeAByteIsWritten() async throws {
        let folder = try Scratch.folder("committed-bound")
        var configuration = EmulatorConfiguration(dataDirectory: folder, blobPort: 0, tablePort: 0, maxBlobBodyBytes: 1 << 20)
        configuration.maxCommittedBlobBytes = 8 << 20
        try await EmulatorServer.withRunning(configuration) { server in
            let blobs = BlobClient(account: server.account)
            try await blobs.createContainer("cont")
            try await Self.stage(blobs, "big", bytes: 1 << 20)
            let used = Self.bytesOnDisk(folder)
            await #expect {
                try await Self.commit(blobs, "big", repeats: 1_200)
            } throws: { error in
                (error as? AzureStorageError)?.status == 413 && (error as? AzureStorageError)?.code == .requestBodyTooLarge
            }
            #expect(Self.bytesOnDisk(folder) < used + (4 << 20), "a refused commit wrote")
            #expect(try await blobs.properties(container: "cont", name: "big") == nil)
            try await Self.commit(blobs, "big", repeats: 8)  // at the bound: committed
            #expect(try await blobs.properties(container: "cont", name: "big")?.contentLength == 8 << 20)
        }
    }

    static func bytesOnDisk(_ folder: URL) -> Int {
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey])
        var total = 0
        while let file = files?.nextObject() as? URL {
            total += (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
        }
        return total
    }
}
