import AzseedTestSupport
import AzureStorage
import Foundation
import Testing

@testable import SeedKit

/// A container's `blobs:`: named by a template, made from a template, a portrait or random
/// bytes, with a content type and metadata — the same bytes for the same seed, refused
/// clearly when names clash or sizes pass the bounds.
@Suite struct GeneratedBlobTests {
    static let yaml = """
        name: blobby
        seed: 11
        window: { from: 2026-01-01, days: 1 }
        containers:
          - name: reports
            blobs:
              - count: 12
                name: "daily/report-{{Number}}.json"
                content: { template: report.mustache }
                metadata: { source: azseed, day: "{{Number}}" }
              - count: 3
                name: "photos/p{{Number}}.jpg"
                content: { image: portrait }
              - count: 20
                name: "raw/{{Index}}.bin"
                content: { bytes: [100, 5000] }
                contentType: application/x-raw
        tables:
          - { name: things, kinds: [ { name: k, partition: p, key: [N], count: 1, fields: { N: { sequence: 1 } } } ] }
        """

    func dataset(_ yaml: String = GeneratedBlobTests.yaml) throws -> Dataset {
        let folder = try Scratch.folder("blob-groups")
        try yaml.write(to: folder.appendingPathComponent("dataset.yaml"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("templates"), withIntermediateDirectories: true)
        try #"{"report": {{Number}}, "name": "{{Name}}"}"#.write(
            to: folder.appendingPathComponent("templates/report.mustache"), atomically: true, encoding: .utf8)
        return try Dataset.load(directory: folder)
    }

    @Test func groupsMakeTheirBlobsTheSameEveryTime() throws {
        let made = try GeneratedDataset.make(try dataset(), options: TestSupport.options())
        let blobs = made.containers[0].blobs
        #expect(blobs.count == 35)
        let reports = blobs.filter { $0.name.hasPrefix("daily/") }
        #expect(reports.count == 12 && reports.allSatisfy { $0.contentType == "application/json" })
        for blob in reports {
            let data = try Data(contentsOf: blob.file!)
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            #expect(object?["name"] as? String == blob.name)
            #expect(blob.properties?.metadata["source"] == "azseed")
            #expect(blob.properties?.metadata["day"] == String(object?["report"] as? Int ?? -1))
        }
        let photos = blobs.filter { $0.name.hasPrefix("photos/") }
        #expect(photos.count == 3 && photos.allSatisfy { $0.contentType == "image/jpeg" })
        for photo in photos {
            if case .failure(let problem) = JPEG.check([UInt8](try Data(contentsOf: photo.file!))) { Issue.record("\(photo.name): \(problem)") }
        }
        let raw = blobs.filter { $0.name.hasPrefix("raw/") }
        #expect(raw.count == 20 && raw.allSatisfy { (100...5000).contains($0.size) && $0.contentType == "application/x-raw" })
        #expect(Set(raw.map(\.size)).count > 1)
        // The same seed, the same bytes; another seed, others.
        let again = try GeneratedDataset.make(try dataset(), options: TestSupport.options())
        #expect(again.containers[0].blobs.map(\.md5) == blobs.map(\.md5))
        let other = try GeneratedDataset.make(try dataset(), options: TestSupport.options(seed: 7))
        #expect(other.containers[0].blobs.filter { $0.name.hasPrefix("raw/") }.map(\.md5) != raw.map(\.md5))
        // The bytes live in a private folder, gone when the state is released.
        let folder = blobs[0].file!.deletingLastPathComponent()
        let mode = try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    @Test func clashesBoundsAndUnknownVariablesAreOneClearError() throws {
        TestSupport.expectRefused(
            Self.yaml,
            [
                ("daily/report-{{Number}}.json", "daily/report.json", "need distinct names"),
                ("raw/{{Index}}.bin", "daily/report-{{Number}}.json", "is made twice"),
                ("content: { bytes: [100, 5000] }", "content: { bytes: [100, 99999999] }", "64 MiB"),
                ("content: { bytes: [100, 5000] }", "content: { bytes: 0 }", "bytes is 1 to"),
                ("count: 20", "count: 0", "count is 1 to"),
                ("raw/{{Index}}.bin", "raw/{{Colour}}.bin", "reads 'Colour'"),
                ("content: { image: portrait }", "content: { image: landscape }", "'portrait'"),
                ("day: \"{{Number}}\"", "\"day-1\": x", "C# identifier"),
                ("contentType: application/x-raw", "contentType: raw", "not a media type"),
                ("source: azseed", "source: \"v\\r\\nx-ms-meta-injected: yes\"", "printable ASCII"),
                ("source: azseed", "source: \"caf\u{E9}\"", "printable ASCII"),
                ("source: azseed", "source: \"" + String(repeating: "x", count: 9000) + "\"", "at most 8 KiB"),
            ]
        ) { edited in _ = try GeneratedDataset.make(try dataset(edited), options: TestSupport.options()) }
        // Up to 1 GiB of random bytes a container, counted before any is written.
        let big = Self.yaml.replacingOccurrences(of: "count: 20", with: "count: 100").replacingOccurrences(
            of: "[100, 5000]", with: "[100, 67108864]")
        #expect(throws: GenerationError.self) { try GeneratedDataset.make(try dataset(big), options: TestSupport.options()) }
    }
}
