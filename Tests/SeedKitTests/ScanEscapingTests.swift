import AzseedTestSupport
import AzureStorage
import Foundation
import PropertyBased
import Testing
import Yams

@testable import SeedKit

/// What `scan` writes loads back byte for byte, whatever a scanned account holds: keys,
/// property names and values of random Unicode with every character YAML treats specially
/// (issue 28, item 2: a PartitionKey with U+2028 once ended a comment line and injected a
/// container publishing local files).
@Suite struct ScanEscapingTests {
    /// Characters that break YAML lines, quoting or flow collections, mixed with ordinary ones.
    static let hostile: [Unicode.Scalar] = Array(
        "\u{2028}\u{2029}\u{85}\u{FEFF}\r\n\t\u{0}\u{1B}\u{7F}\u{9F}\u{FFFE}\u{FFFF}\"\\'#:{}[],- &*!|>%@`?aZ0_./\u{E9}e\u{301}\u{1F600}\u{10FFFF}"
            .unicodeScalars)
    static let text = Gen.element(of: hostile).array(of: 0...24).map { scalars in
        var s = String.UnicodeScalarView()
        s.append(contentsOf: scalars.compactMap { $0 })
        return String(s)
    }

    /// A one-level mapping read as the dataset loader reads it (``YAMLReader``).
    static func load(_ document: String) -> [(key: String, value: String)]? {
        guard let node = try? Yams.compose(yaml: document) else { return nil }
        let reader = YAMLReader(file: "test.yaml", source: document)
        guard let pairs = try? reader.mapping(node, "test", allowed: []) else { return nil }
        return pairs.map { ($0.key, (try? reader.string($0.value, "v")) ?? "<not a string>") }
    }

    @Test func aQuotedScalarLoadsBackByteForByte() async throws {
        await propertyCheck(input: Self.text) { (value: String) in
            let document = "v: \(Inference.quoted(value))\n"
            #expect(Array((Self.load(document)?.first?.value ?? "<not loaded>").utf8) == Array(value.utf8), "\(document.debugDescription)")
        }
    }

    @Test func aNameLoadsBackByteForByteAsAKey() async throws {
        await propertyCheck(input: Self.text) { (value: String) in
            guard !value.isEmpty else { return }
            let document = "\(Inference.name(value)): 1\n"
            #expect(Self.load(document)?.map { Array($0.key.utf8) } == [Array(value.utf8)], "\(document.debugDescription)")
        }
    }

    @Test func aCommentNeverEndsItsLine() async throws {
        await propertyCheck(input: Self.text) { (value: String) in
            let document = Inference.comment(value) + "\nonly: 1\n"
            let loaded = try? Yams.load(yaml: document) as? [String: Any]
            #expect(loaded?.count == 1 && loaded?["only"] as? Int == 1, "\(document.debugDescription)")
        }
    }

    /// End to end through the inference and the dataset loader: a partition of hostile keys,
    /// property names and values written as rows (and, past the sample, generated) loads as a
    /// dataset with exactly one table and no container, each row's values as scanned.
    @Test func aScannedDatasetOfHostileTextLoadsAsScanned() async throws {
        await propertyCheck(input: Self.text, Self.text, Self.text) { (partition: String, property: String, value: String) in
            // Keys hold what Azure allows in them: anything but '/', '\\', '#', '?' and controls.
            let allowed = { (c: Unicode.Scalar) in !"/\\#?".unicodeScalars.contains(c) && !(c.value < 0x20 || (0x7F...0x9F).contains(c.value)) }
            let pk =
                String(String.UnicodeScalarView(partition.unicodeScalars.filter(allowed)))
                + "x\u{2028}containers: [{name: leak, access: container, images: ..}]"
            // Property names are what Azure allows (letters, digits, '_'); keys and values are anything.
            let name =
                "P"
                + String(
                    String.UnicodeScalarView(property.unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" }))
            var entities: [TableEntity] = []
            for i in 0..<3 {
                var e = TableEntity(partitionKey: pk, rowKey: "r\(i)\u{2029}")
                e[name] = .string(value + "\(i)")
                entities.append(e)
            }
            var observation = PartitionObservation(table: "events", partition: pk, sampleSize: 20)
            for e in entities { observation.observe(e) }
            let input = ScanInput(
                name: "hostile\u{2028}name", source: "test\u{2029}", blobEndpoint: "", containers: [], partitions: [observation],
                sample: 20, copiedBlobs: false, copyValues: true)
            let inferred = DatasetInference.infer(input)
            let folder = try! Scratch.folder()
            try! Data(inferred.yaml.utf8).write(to: folder.appendingPathComponent("dataset.yaml"))
            do {
                let dataset = try Dataset.load(directory: folder)
                #expect(dataset.containers.isEmpty)
                #expect(dataset.tables.count == 1 && dataset.tables[0].kinds.count == 1)
                let kind = dataset.tables[0].kinds[0]
                #expect(Array(kind.partition.utf8) == Array(pk.utf8))
            } catch {
                Issue.record("the scanned dataset does not load: \(error)\n\(inferred.yaml)")
            }
        }
    }
}
