import AzseedTestSupport
import AzureStorage
import Foundation
import Testing

@testable import SeedKit

/// A dataset's `entities:` (copied entities) and a container's `properties:` (copied blob
/// headers and metadata), as a hostile dataset's author would write them: every file stays
/// inside the dataset's folder, every line is an entity Azure would take in the kind's own
/// partition, no RowKey twice, no metadata Azure would refuse — each refused in one line naming
/// the place, before anything is generated.
@Suite struct CopiedEntitiesTests {
    static func dataset(_ yaml: String, files: [String: String]) throws -> URL {
        let folder = try Scratch.folder("copied")
        try Data(yaml.utf8).write(to: folder.appendingPathComponent("dataset.yaml"))
        for (path, text) in files {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        return folder
    }

    static func kind(_ file: String, partition: String = "p") -> String {
        "name: c\ntables:\n  - name: things\n    kinds:\n      - name: k\n        partition: \"\(partition)\"\n        entities: \"\(file)\"\n"
    }

    static func failure(_ folder: URL) -> String? {
        do {
            _ = try GeneratedDataset.make(try Dataset.load(directory: folder), options: GenerationOptions(now: EdmDateTime(unixSeconds: 0)))
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func copiedEntitiesComeBackInRowKeyOrderWithTheirOwnTypes() throws {
        let lines = """
            {"PartitionKey":"p","RowKey":"b","N":"5","N@odata.type":"Edm.Int64"}
            {"PartitionKey":"p","RowKey":"a","N":5}

            """
        let made = try GeneratedDataset.make(
            try Dataset.load(directory: try Self.dataset(Self.kind("e.jsonl"), files: ["e.jsonl": lines])),
            options: GenerationOptions(now: EdmDateTime(unixSeconds: 0)))
        var seen: [TableEntity] = []
        try made.tables[0].forEachEntity { seen.append($0.tableEntity) }
        #expect(seen.map(\.rowKey) == ["a", "b"])
        #expect(seen.map { $0["N"] } == [.int32(5), .int64(5)])
    }

    @Test func aFileOutsideTheDatasetIsRefused() throws {
        let outside = try Scratch.folder("elsewhere")
        try Data("{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}\n".utf8).write(to: outside.appendingPathComponent("e.jsonl"))
        let folder = try Self.dataset(Self.kind("../\(outside.lastPathComponent)/e.jsonl"), files: [:])
        #expect(Self.failure(folder)?.contains("leads out of the dataset's folder") == true)
        let linked = try Self.dataset(Self.kind("link.jsonl"), files: [:])
        try FileManager.default.createSymbolicLink(
            at: linked.appendingPathComponent("link.jsonl"), withDestinationURL: outside.appendingPathComponent("e.jsonl"))
        #expect(Self.failure(linked)?.contains("symbolic link leading out") == true)
    }

    @Test func anEntityOfAnotherPartitionATwiceCopiedRowKeyOrABadLineIsRefusedNamingItsLine() throws {
        let cases: [(String, String)] = [
            (
                "{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}\n{\"PartitionKey\":\"other\",\"RowKey\":\"b\"}\n",
                "e.jsonl:2: the entity's PartitionKey is 'other'"
            ),
            (
                "{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}\n{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}\n",
                "e.jsonl:2: RowKey 'a' is copied twice (first at line 1)"
            ),
            ("{\"PartitionKey\":\"p\",\"RowKey\":\"a/b\"}\n", "e.jsonl:1: the entity has an invalid RowKey"),
            (
                "{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}\n{\"PartitionKey\":\"p\",\"RowKey\":\"c\"}\n{\"PartitionKey\":\"p\",\"RowKey\":\"b\"}\n{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}\n",
                "e.jsonl:4: RowKey 'a' is copied twice (first at line 1)"
            ),
            ("not json\n", "e.jsonl:1: not an entity"),
        ]
        for (lines, message) in cases {
            let failure = Self.failure(try Self.dataset(Self.kind("e.jsonl"), files: ["e.jsonl": lines]))
            #expect(failure?.contains(message) == true, "\(failure ?? "accepted")")
        }
    }

    @Test func aCopiedKindStandsAlone() throws {
        let shared =
            Self.kind("e.jsonl")
            + "      - name: g\n        partition: \"p\"\n        key: [N]\n        count: 1\n        fields:\n          N: { const: 1 }\n"
        #expect(Self.failure(try Self.dataset(shared, files: ["e.jsonl": ""]))?.contains("its partition is its own") == true)
        let withCount = Self.kind("e.jsonl") + "        count: 3\n"
        #expect(Self.failure(try Self.dataset(withCount, files: ["e.jsonl": ""]))?.contains("takes no 'count'") == true)
    }

    @Test func blobPropertiesAreCheckedAndKept() throws {
        let yaml = "name: c\ncontainers:\n  - name: files\n    files: \"blobs/files/\"\n    properties: \"blobs/files.json\"\n"
        let good = """
            [{"name": "a.jpg", "contentType": "text/plain", "cacheControl": "no-cache", "metadata": {"owner": "ops"}}]
            """
        let folder = try Self.dataset(yaml, files: ["blobs/files/a.jpg": "not a jpeg", "blobs/files.json": good])
        let made = try GeneratedDataset.make(try Dataset.load(directory: folder), options: GenerationOptions(now: EdmDateTime(unixSeconds: 0)))
        let blob = try #require(made.containers.first?.blobs.first)
        #expect(blob.contentType == "text/plain" && blob.properties?.cacheControl == "no-cache" && blob.properties?.metadata == ["owner": "ops"])
        for (json, message) in [
            ("[{\"name\": \"a.txt\", \"contentType\": \"x\", \"metadata\": {\"bad name\": \"v\"}}]", "metadata 'bad name' that Azure would refuse"),
            ("[{\"name\": \"gone.txt\", \"contentType\": \"x\"}]", "blob 'gone.txt' has no file"),
            ("[{\"name\": \"a.txt\", \"contentType\": \"x\"}, {\"name\": \"a.txt\", \"contentType\": \"y\"}]", "listed twice"),
            ("[{\"name\": \"a.txt\", \"contentType\": \"x\", \"accessTier\": \"P30\"}]", "an access tier that is not Hot, Cool, Cold or Archive"),
            // Found by an attacker: values were checked only when apply sent them, after it had
            // written the container and the ledger; an escape sequence reached the terminal.
            (
                "[{\"name\": \"a.txt\", \"contentType\": \"x\", \"cacheControl\": \"a\\r\\nx-ms-meta-evil: 1\"}]",
                "a cacheControl that is not printable ASCII"
            ),
            ("[{\"name\": \"a.txt\", \"contentType\": \"text/plain\\u001b[2J\"}]", "a contentType that is not printable ASCII"),
            ("[{\"name\": \"a.txt\", \"contentType\": \"\"}]", "an empty contentType"),
            ("[{\"name\": \"a.txt\", \"contentType\": \"x\", \"metadata\": {\"X\": \"1\", \"x\": \"2\"}}]", "names that differ only in case"),
            ("[{\"name\": \"a.txt\", \"contentType\": \"x\", \"metadata\": {\"a\": \"caf\u{E9}\"}}]", "whose value is not printable ASCII"),
            (
                "[{\"name\": \"a.txt\", \"contentType\": \"x\", \"metadata\": {\"a\": \"\(String(repeating: "v", count: 9000))\"}}]",
                "Azure takes at most 8 KiB"
            ),
            ("[{\"name\": \"a.txt\", \"contentType\": \"x\", \"metadata\": \"x\"}]", "metadata that is not an object"),
        ] {
            let bad = try Self.dataset(yaml, files: ["blobs/files/a.txt": "x", "blobs/files.json": json])
            #expect(Self.failure(bad)?.contains(message) == true, "\(Self.failure(bad) ?? "accepted")")
        }
        // The container's own metadata: names Azure takes, kept exactly.
        let kept = try Self.dataset("name: c\ncontainers:\n  - name: files\n    metadata: { team: \"ops\", empty: \"\" }\n", files: [:])
        let container = try GeneratedDataset.make(try Dataset.load(directory: kept), options: GenerationOptions(now: EdmDateTime(unixSeconds: 0)))
            .containers.first
        #expect(container?.metadata == ["team": "ops", "empty": ""])
        let refused = try Self.dataset("name: c\ncontainers:\n  - name: files\n    metadata: { \"bad name\": \"x\" }\n", files: [:])
        #expect(Self.failure(refused)?.contains("metadata 'bad name'") == true, "\(Self.failure(refused) ?? "accepted")")
    }
}
