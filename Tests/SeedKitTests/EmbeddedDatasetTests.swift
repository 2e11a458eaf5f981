import AzseedTestSupport
import Foundation
import Testing

@testable import SeedKit

/// The default dataset compiled into the binary is the repository's, byte for byte, and works
/// once written out.
@Suite struct EmbeddedDatasetTests {
    @Test func theEmbeddedFilesAreTheRepositorysFiles() throws {
        var onDisk: [String] = []
        for folder in ["Seeds/speakeasy", "Seeds/chat"] {
            let base = TestSupport.repositoryRoot.appendingPathComponent(folder)
            let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey])!
            for case let url as URL in walker where (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true {
                onDisk.append(folder + String(url.standardizedFileURL.path.dropFirst(base.standardizedFileURL.path.count)))
            }
        }
        #expect(EmbeddedDataset.files.map(\.path) == onDisk.sorted(), "run Tools/embed-default-dataset.py")
        for (path, base64) in EmbeddedDataset.files {
            let bytes = try Data(contentsOf: TestSupport.repositoryRoot.appendingPathComponent(path))
            #expect(EmbeddedDataset.bytes(base64) == bytes, "\(path) differs from its embedded copy: run Tools/embed-default-dataset.py")
        }
    }

    @Test func writtenOutItIsTheDefaultDataset() throws {
        let cache = try Scratch.folder("embedded")
        let folder = try EmbeddedDataset.extracted(cache: cache)
        #expect(try EmbeddedDataset.extracted(cache: cache) == folder)  // written once
        let desired = try GeneratedDataset.make(try Dataset.load(directory: folder), options: TestSupport.options(events: 20))
        let reference = try GeneratedDataset.make(try Dataset.load(directory: TestSupport.speakeasy), options: TestSupport.options(events: 20))
        #expect(desired.containers.map { $0.blobs.map(\.md5Base64) } == reference.containers.map { $0.blobs.map(\.md5Base64) })
        #expect(try TestSupport.entities(desired.tables[0]).map(\.rowKey) == TestSupport.entities(reference.tables[0]).map(\.rowKey))
    }
}
