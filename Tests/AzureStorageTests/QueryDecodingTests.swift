import AzureStorage
import Testing

/// `+` in a query is a space, on both sides of the wire (issue 14, item 1): the client reads
/// SAS tokens and URLs with the same decoding the emulator reads requests with.
@Suite struct QueryDecodingTests {
    @Test func plusIsASpaceAndPercentTwoBIsAPlus() throws {
        let request = try #require(TransportRequest(method: "GET", url: "http://h/acct/c?comp=list&prefix=with+space%2F&marker=a%2Bb"))
        #expect(request.query.map { [$0.name, $0.value] } == [["comp", "list"], ["prefix", "with space/"], ["marker", "a+b"]])
        #expect(PercentEncoding.decodeQueryComponent("PartitionKey+eq+'a+b'") == "PartitionKey eq 'a b'")
        #expect(PercentEncoding.decodeQueryComponent("%ZZ") == nil)
    }

    @Test func sasTokensDecodeTheSameWay() throws {
        let token = try #require(SASToken("sv=2022-11-02&sp=r&sig=abc%2Bdef%3D"))
        #expect(token.parameters.first { $0.0 == "sig" }?.1 == "abc+def=")
        // A signature pasted with a raw '+' reads as a space, as Azure reads it.
        #expect(try #require(SASToken("sv=1&sig=a+b")).parameters.first { $0.0 == "sig" }?.1 == "a b")
    }
}
