import Foundation
import Testing

@testable import StorageEmulator

/// The two ranges a SAS can narrow its grant to: table keys (byte order, both ends
/// inclusive) and source addresses.
@Suite struct SASRangeTests {
    @Test func aKeyRangeIncludesBothEndsInByteOrder() throws {
        let range = try #require(try TableKeyRange(spk: "b", srk: "5", epk: "c", erk: "3"))
        #expect(range.contains(partitionKey: "b", rowKey: "5"))
        #expect(range.contains(partitionKey: "b", rowKey: "9"))
        #expect(range.contains(partitionKey: "b\u{0}", rowKey: ""))
        #expect(range.contains(partitionKey: "c", rowKey: "3"))
        #expect(!range.contains(partitionKey: "b", rowKey: "4"))
        #expect(!range.contains(partitionKey: "c", rowKey: "30"))
        #expect(!range.contains(partitionKey: "a", rowKey: "9"))
        #expect(!range.contains(partitionKey: "d", rowKey: ""))
        // Bytes, not canonical equivalence: NFD "é" (e + U+0301) sorts before NFC "é" (U+00E9).
        let accents = try #require(try TableKeyRange(spk: "\u{E9}", srk: "", epk: "", erk: ""))
        #expect(!accents.contains(partitionKey: "e\u{301}", rowKey: "x"))
        #expect(accents.contains(partitionKey: "\u{E9}", rowKey: "x"))
    }

    @Test func openEndsAndMalformedRanges() throws {
        let from = try #require(try TableKeyRange(spk: "m", srk: "", epk: "", erk: ""))
        #expect(
            from.contains(partitionKey: "m", rowKey: "") && from.contains(partitionKey: "zzz", rowKey: "")
                && !from.contains(partitionKey: "l", rowKey: "z"))
        #expect(try TableKeyRange(spk: "", srk: "", epk: "", erk: "") == nil)
        #expect(throws: ServiceError.self) { try TableKeyRange(spk: "", srk: "5", epk: "", erk: "") }
        #expect(throws: ServiceError.self) { try TableKeyRange(spk: "a", srk: "", epk: "", erk: "9") }
    }

    @Test func sourceAddressesAndRanges() throws {
        let one = try #require(IPv4Range("127.0.0.1"))
        #expect(one.contains(IPv4Range.address("127.0.0.1")!) && !one.contains(IPv4Range.address("127.0.0.2")!))
        let range = try #require(IPv4Range("10.0.0.0-10.0.1.255"))
        #expect(range.contains(IPv4Range.address("10.0.1.7")!) && !range.contains(IPv4Range.address("10.0.2.0")!))
        #expect(IPv4Range.address("::ffff:10.0.0.1") == IPv4Range.address("10.0.0.1"))
        for bad in ["", "10.0.0", "10.0.0.256", "10.0.0.1-10.0.0.0", "a.b.c.d", "10.0.0.1-", "1.2.3.4.5"] { #expect(IPv4Range(bad) == nil, "\(bad)") }
    }
}
