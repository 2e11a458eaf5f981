import AzureStorage
import Foundation
import Testing

@testable import StorageEmulator

/// List Blobs' Arrow answer holds everything its XML answer does: every element a listing can
/// write has a column of the element's type.
@Suite struct ArrowListingTests {
    static func everything(_ type: BlobType) -> BlobRecord {
        var r = BlobRecord(
            row: [
                "container": "c", "name": "n", "data": "", "size": 3, "contentType": "text/plain", "created": 0, "modified": 0,
                "etag": "\"0x1\"", "metadata": "[]", "blocks": "[]",
            ])
        r.type = type
        r.sealed = true
        r.tier = "Smart"
        r.rehydrateTo = "Hot"
        r.rehydratePriority = "High"
        r.tierChanged = EdmDateTime(ticks: 1)
        r.versionId = "2026-01-01T00:00:00.0000000Z"
        r.deletedAt = EdmDateTime(ticks: 2)
        r.keySHA256 = "key"
        r.encryptionScope = "scope"
        var copy = CopyInfo(id: "id", source: "src", bytes: 3, completed: EdmDateTime(ticks: 3))
        copy.incremental = true
        copy.destinationSnapshot = "s"
        r.copy = copy
        r.lease = BlobLease(id: "l", duration: 15, expires: EdmDateTime.endOfRange, breakAt: nil, broken: false)
        r.tags = try! BlobTags([("k", "v")])
        r.hasVersionsOnly = true
        return r
    }

    @Test func everyElementAListingWritesHasItsColumn() {
        let columns = Dictionary(uniqueKeysWithValues: BlobListingArrow.columns.map { ($0.name, $0.type) })
        var seen: Set<String> = []
        for type in [BlobType.block, .page, .append] {
            for snapshot in [nil, "2026-01-01T00:00:00.0000000Z"] {
                var record = Self.everything(type)
                record.snapshot = snapshot
                let entry = BlobListingEntry(
                    record, includeMetadata: true, includeTags: true, includeCopy: true, retentionDays: 7, now: EdmDateTime(ticks: 4))
                for (name, value) in entry.head + entry.properties {
                    seen.insert(name)
                    let expected: ArrowType =
                        switch value {
                        case .text: .utf8
                        case .integer: .int64
                        case .flag: .bool
                        case .time: .timestampMilliseconds
                        }
                    #expect(columns[name] == expected, "\(name)")
                }
            }
        }
        // And no column is one no listing writes (beyond the name, the kind and HasVersionsOnly).
        #expect(Set(columns.keys).subtracting(seen) == ["Name", "ResourceType", "HasVersionsOnly"])
    }

    @Test func theXMLIsWrittenFromTheSameEntry() {
        let entry = BlobListingEntry(Self.everything(.page), includeMetadata: true, includeCopy: true, now: EdmDateTime(ticks: 4))
        let xml = BlobListingXML.blob(entry)
        for (name, _) in entry.head + entry.properties { #expect(xml.contains("<\(name)"), "\(name)") }
        #expect(xml.contains("<x-ms-blob-sequence-number>0</x-ms-blob-sequence-number>"))
        #expect(xml.hasSuffix("<Metadata /><HasVersionsOnly>true</HasVersionsOnly></Blob>"))
    }
}
