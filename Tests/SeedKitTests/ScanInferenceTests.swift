import AzureStorage
import Foundation
import Testing

@testable import SeedKit

/// `azseed scan`'s inference on entities made here: the same data in any order gives the same
/// dataset, and what it infers generates the same shape again.
@Suite struct ScanInferenceTests {
    func observe(_ entities: [TableEntity], sample: Int) -> [PartitionObservation] {
        var byPartition: [String: PartitionObservation] = [:]
        for e in entities {
            byPartition[e.partitionKey, default: PartitionObservation(table: "events", partition: e.partitionKey, sampleSize: sample)].observe(e)
        }
        return Array(byPartition.values)
    }

    func speakeasy() throws -> [TableEntity] {
        let made = try GeneratedDataset.make(try Dataset.load(directory: TestSupport.speakeasy), options: TestSupport.options(events: 200))
        return try TestSupport.entities(made.tables[0]).map(\.tableEntity)
    }

    @Test func theSameDataInAnyOrderGivesTheSameDataset() throws {
        let entities = try speakeasy()
        let input = { (list: [TableEntity]) in
            ScanInput(
                name: "s", source: "test", blobEndpoint: "http://127.0.0.1:10000/devstoreaccount1", containers: [],
                partitions: self.observe(list, sample: 20), sample: 20, copiedBlobs: false, copyValues: true)
        }
        let forward = DatasetInference.infer(input(entities))
        let backward = DatasetInference.infer(input(entities.reversed()))
        #expect(forward.yaml == backward.yaml)
        #expect(forward.templates.map(\.text) == backward.templates.map(\.text))
    }

    @Test func referencesTemplatesWeightsAndKeysAreFound() throws {
        let input = ScanInput(
            name: "s", source: "test", blobEndpoint: "", containers: [], partitions: observe(try speakeasy(), sample: 20),
            sample: 20, copiedBlobs: false, copyValues: true)
        let inferred = DatasetInference.infer(input)
        #expect(inferred.yaml.contains("SpeakerKey: { from: speaker.RowKey }"))
        #expect(inferred.yaml.contains("SpeakerName: { from: speaker.Name }"))
        #expect(inferred.yaml.contains("key: [Name]"))
        #expect(inferred.yaml.contains("EventName: { pick: [") && inferred.yaml.contains("weights: ["))
        #expect(
            inferred.templates.contains {
                $0.name == "event-EventDescription.mustache" && $0.text.hasPrefix("{{EventName}} in {{EventLocation}} with {{SpeakerName}}.")
            })
        // Without the container the photo URLs are no blob URLs: a sampled list, bounded by the sample.
        #expect(!inferred.yaml.contains("blobUrl"))
    }

    @Test func theSampleIsTheLowestHashesWhateverTheOrder() throws {
        let entities = try speakeasy()
        var a = PartitionObservation(table: "events", partition: "Events", sampleSize: 7)
        var b = a
        for e in entities where e.partitionKey == "Events" { a.observe(e) }
        for e in entities.reversed() where e.partitionKey == "Events" { b.observe(e) }
        #expect(a.sample.map(\.rowKey) == b.sample.map(\.rowKey))
        #expect(a.sample.count == 7 && a.count == 200)
    }
}
