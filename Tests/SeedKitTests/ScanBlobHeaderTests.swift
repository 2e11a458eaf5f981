import AzureStorage
import Testing

@testable import SeedKit

/// dataset.yaml's first lines say what its blobs are: under made-up names unless the scan kept
/// the account's (a new user read "placeholders of the same names" above `blob-1.jpg`).
@Suite struct ScanBlobHeaderTests {
    func header(renamed: Bool) -> String {
        var container = ScannedContainer(name: "photos", access: .blob, blobs: [("people/ada.jpg", 10, "image/jpeg")])
        if renamed { container = container.placeholderNames() }
        return DatasetInference.infer(
            ScanInput(name: "s", source: "t", blobEndpoint: "", containers: [container], partitions: [], sample: 20, copiedBlobs: false)
        ).yaml
    }

    @Test func madeUpNamesAreSaidToBeMadeUp() {
        let yaml = header(renamed: true)
        #expect(yaml.contains("# Blobs: placeholders under made-up names"), "\(yaml)")
        #expect(!yaml.contains("of the same names"))
        #expect(!yaml.contains("ada.jpg") && !yaml.contains("people/"))
    }

    @Test func keptNamesAreSaidToBeKept() {
        #expect(header(renamed: false).contains("# Blobs: placeholders of the same names"))
    }
}
