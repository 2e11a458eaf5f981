import PropertyBased
import Testing

@testable import AzureStorage

/// A batch changes each entity once: RowKeys in increasing byte order are taken as distinct
/// without hashing them, and any other order is still checked whole.
@Suite struct TableBatchProblemTests {
    static func batch(_ rowKeys: [String]) -> [TableBatchOperation] {
        rowKeys.map { .delete(partitionKey: "p", rowKey: $0, etag: "*") }
    }

    @Test func aRepeatedRowKeyIsRefusedInAnyOrder() async {
        let key = Gen.int(in: 0...40).map { "k\($0)" }
        await propertyCheck(input: key.array(of: 1...30)) { rowKeys in
            let problem = TableBatchCodec.problem(Self.batch(rowKeys))
            let repeated = Set(rowKeys).count < rowKeys.count
            #expect((problem != nil) == repeated)
            #expect(problem.map { $0.contains("both change RowKey") } ?? true)
        }
    }

    /// NFC and NFD are two RowKeys, sorted or not; the same bytes twice, side by side, are one.
    @Test func rowKeysAreToldApartByTheirBytes() {
        #expect(TableBatchCodec.problem(Self.batch(["e\u{301}", "\u{E9}"])) == nil)
        #expect(TableBatchCodec.problem(Self.batch(["\u{E9}", "e\u{301}"])) == nil)
        #expect(TableBatchCodec.problem(Self.batch(["a", "\u{E9}", "\u{E9}"])) != nil)
    }
}
