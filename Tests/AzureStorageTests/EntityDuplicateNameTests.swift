import Testing

@testable import AzureStorage

/// A JSON object naming a property, an annotation or a key twice is not one entity: azseed's
/// reader refuses it (a service's answer or a snapshot line) instead of keeping the last value.
@Suite struct EntityDuplicateNameTests {
    static func read(_ text: String) throws -> TableEntity { try EntityJSONReader.entity(Array(text.utf8)).entity }

    @Test(arguments: [
        (#"{"PartitionKey":"p","RowKey":"r","N":1,"N":2}"#, EntityDecodingError.Duplicate.property),
        (#"{"PartitionKey":"p","RowKey":"r","N":1,"\u004e":2}"#, .property),
        (#"{"PartitionKey":"p","RowKey":"r","N":"1","N@odata.type":"Edm.Int64","N@odata.type":"Edm.Int64"}"#, .property),
        (#"{"PartitionKey":"p","RowKey":"r","Partition\u004bey":"q"}"#, .key),
        (#"{"PartitionKey":"p","RowKey":"r","RowKey":"r"}"#, .key),
    ])
    func aNameGivenTwiceIsRefused(body: String, duplicate: EntityDecodingError.Duplicate) {
        #expect {
            try Self.read(body)
        } throws: { error in
            (error as? EntityDecodingError)?.duplicate == duplicate
        }
    }

    /// From an attacker's review: where a null means absent (a `$select` answer), a name given
    /// a value and a null was taken with whichever came last.
    @Test(arguments: [#"{"PartitionKey":"p","RowKey":"r","A":"x","A":null}"#, #"{"PartitionKey":"p","RowKey":"r","A":null,"A":"y"}"#])
    func aNameGivenAValueAndANullIsRefused(body: String) {
        #expect {
            try EntityJSONReader.entity(Array(body.utf8), nullIsAbsent: true)
        } throws: { error in
            (error as? EntityDecodingError)?.duplicate == .property
        }
    }

    /// More members than an entity can hold is refused before any is matched to another.
    @Test func moreMembersThanAnEntityHoldsAreRefused() throws {
        let members = (0..<300).map { #""P\#($0)@odata.type":"Edm.Int64","P\#($0)":"\#($0)""# }.joined(separator: ",")
        #expect {
            try Self.read(#"{"PartitionKey":"p","RowKey":"r","# + members + "}")
        } throws: { error in
            (error as? EntityDecodingError)?.tooManyProperties == true
        }
        let held = (0..<252).map { #""P\#($0)@odata.type":"Edm.Int64","P\#($0)":"\#($0)""# }.joined(separator: ",")
        #expect(try Self.read(#"{"PartitionKey":"p","RowKey":"r","# + held + "}").properties.count == 252)
    }

    /// NFC and NFD names are two properties, as Azure tells them apart.
    @Test func namesAreComparedByTheirBytes() throws {
        let entity = try Self.read(#"{"PartitionKey":"p","RowKey":"r","\u00e9":1,"e\u0301":2}"#)
        #expect(entity.properties.count == 2)
    }
}
