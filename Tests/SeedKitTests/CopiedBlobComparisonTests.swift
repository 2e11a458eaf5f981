import AzureStorage
import Testing

@testable import SeedKit

/// What `azseed copy` compares of a blob beyond its content: content headers and metadata,
/// by bytes as Azure keeps them.
@Suite struct CopiedBlobComparisonTests {
    @Test func metadataValuesAreComparedByBytesAndNamesWithoutCase() {
        let nfc = "caf\u{E9}"
        let nfd = "cafe\u{301}"  // equal to Swift's ==, different bytes
        #expect(nfc == nfd)
        #expect(!Planner.sameMetadata(["note": nfc], ["note": nfd]))
        #expect(Planner.sameMetadata(["Owner": "ops"], ["owner": "ops"]))
        #expect(!Planner.sameMetadata(["owner": "ops"], ["owner": "ops", "extra": ""]))
    }

    @Test func contentHeadersAreComparedAndAbsentEqualsEmpty() {
        let a = BlobProperties(name: "a", contentLength: 1, cacheControl: "no-cache", contentLanguage: "de")
        var b = a
        #expect(Planner.sameContentHeaders(a, b))
        b.contentLanguage = "fr"
        #expect(!Planner.sameContentHeaders(a, b))
        b = a
        b.contentDisposition = ""
        #expect(Planner.sameContentHeaders(a, b))
    }
}
