import Foundation
import Testing

@testable import StorageEmulator

/// The Arrow IPC stream writer: Azure's recorded answer reproduced byte for byte, and streams
/// of every column type read back by an independent reader in the pytest suites (nanoarrow).
@Suite struct ArrowStreamTests {
    /// Azure's answer to `SELECT _2 from BlobStorage WHERE _1 > 250` over
    /// "100,200,300,400\n300,400,500,600\n" with one output field `decimal(4, 2)` named "abc",
    /// as recorded in the Python SDK's `test_quick_query_output_in_arrow_format`: the schema, an
    /// empty batch, a batch of one row.
    static let azureAnswer = Data(
        base64Encoded:
            "/////3gAAAAQAAAAAAAKAAwABgAFAAgACgAAAAABBAAMAAAACAAIAAAABAAIAAAABAAAAAEAAAAU"
            + "AAAAEAAUAAgABgAHAAwAAAAQABAAAAAAAAEHEAAAABwAAAAEAAAAAAAAAAMAAABhYmMACAAMAAQA"
            + "CAAIAAAABAAAAAIAAAD/////cAAAABAAAAAAAAoADgAGAAUACAAKAAAAAAMEABAAAAAAAAoADAAA"
            + "AAQACAAKAAAAMAAAAAQAAAACAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
            + "AQAAAAAAAAAAAAAAAAAAAAAAAAD/////iAAAABQAAAAAAAAADAAWAAYABQAIAAwADAAAAAADBAAY"
            + "AAAAEAAAAAAAAAAAAAoAGAAMAAQACAAKAAAAPAAAABAAAAABAAAAAAAAAAAAAAACAAAAAAAAAAAA"
            + "AAAAAAAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAAQAAAAEAAAAAAAAAAAAAAAAAAACQAQAAAAAA"
            + "AAAAAAAAAAAA")!

    @Test func writesAzuresRecordedAnswerByteForByte() {
        let writer = ArrowStreamWriter(fields: [ArrowField(name: "abc", type: .decimal128(precision: 4, scale: 2))])
        var out = writer.schema()
        out.append(writer.batch(rows: 0, columns: [[]]))
        out.append(writer.batch(rows: 1, columns: [[.decimal(400)]]))
        #expect(out == Self.azureAnswer)
    }

    @Test func identicalTablesShareOneVtable() {
        // Two fields of one type: the second Field table refers to the first one's vtable.
        let one = ArrowStreamWriter(fields: [ArrowField(name: "a", type: .int64)]).schema()
        let two = ArrowStreamWriter(fields: [ArrowField(name: "a", type: .int64), ArrowField(name: "b", type: .int64)]).schema()
        // Each further field costs its table, name and type only: no second 16-byte vtable.
        #expect(two.count - one.count < 16 + 8 + 12 + 8 + 8)
    }

    @Test func everyMessageIsFramedAndAligned() {
        let writer = ArrowStreamWriter(
            fields: [
                ArrowField(name: "s", type: .utf8), ArrowField(name: "m", type: .stringMap), ArrowField(name: "b", type: .bool),
                ArrowField(name: "t", type: .timestampMilliseconds), ArrowField(name: "d", type: .double),
            ],
            metadata: [("NextMarker", "next")])
        let columns: [[ArrowValue]] = [
            [.utf8(Array("x".utf8)), .null, .utf8([])],
            [.map([(Array("k".utf8), Array("v".utf8))]), .map([]), .null],
            [.bool(true), .bool(false), .null],
            [.integer(1_700_000_000_000), .null, .integer(0)],
            [.double(1.5), .null, .double(-2)],
        ]
        for message in [writer.schema(), writer.batch(rows: 3, columns: columns)] {
            let bytes = [UInt8](message)
            #expect(Array(bytes[0..<4]) == [0xFF, 0xFF, 0xFF, 0xFF])
            let length = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
            #expect(length % 8 == 0)
            #expect(bytes.count >= 8 + length)
            #expect((bytes.count - 8 - length) % 8 == 0)
        }
    }

    static func arrowRequest(_ expression: String, fields: String) throws -> QueryRequest {
        try QueryRequest.parse(
            Data(
                """
                <QueryRequest><QueryType>SQL</QueryType><Expression>\(expression)</Expression><OutputSerialization><Format>\
                <Type>arrow</Type><ArrowConfiguration><Schema>\(fields)</Schema></ArrowConfiguration></Format></OutputSerialization></QueryRequest>
                """.utf8))
    }

    @Test func aQueryAnswersAzuresArrowBytes() throws {
        // The same query and blob as the recorded answer, through the whole query run.
        let request = try Self.arrowRequest(
            "SELECT _2 from BlobStorage WHERE _1 &gt; 250",
            fields: "<Field><Type>decimal</Type><Name>abc</Name><Precision>4</Precision><Scale>2</Scale></Field>")
        let blob = Array("100,200,300,400\n300,400,500,600\n".utf8)
        for pieces in [1, 3, 30] {
            let (data, errors) = QueryBlobContentsTests.run(request, blob, pieces: pieces)
            #expect(errors.isEmpty)
            // However the blob is cut, the schema and empty batch come first and the rows follow.
            let expectedRows = pieces == 1 ? Self.azureAnswer : nil
            if let expectedRows { #expect(Data(data) == expectedRows) }
            #expect(Data(data.prefix(0xF8)) == Self.azureAnswer.prefix(0xF8))
        }
    }

    @Test func valuesThatAreNotOfTheirTypeSkipTheirRecord() throws {
        let request = try Self.arrowRequest(
            "SELECT * from BlobStorage",
            fields: "<Field><Type>int64</Type><Name>n</Name></Field><Field><Type>timestamp[ms]</Type><Name>t</Name></Field>")
        let (_, errors) = QueryBlobContentsTests.run(request, Array("1,2020-01-02T03:04:05.678Z\nx,2020-01-02\n3,later\n4\n".utf8), pieces: 1)
        #expect(errors.map(\.name) == ["InvalidTypeConversion", "InvalidTypeConversion", "InvalidArrowSchema"])
        #expect(errors.map(\.fatal) == [false, false, true])
        #expect(errors.map(\.position) == [27, 40, 48])
    }

    @Test func conversionsReadWhatTheTextSays() {
        #expect(ISOTimestamp.milliseconds(Array("1970-01-01".utf8)) == 0)
        #expect(ISOTimestamp.milliseconds(Array("2020-01-02T03:04:05.678Z".utf8)) == 1_577_934_245_678)
        #expect(ISOTimestamp.milliseconds(Array("2020-01-02T04:04:05.6+01:00".utf8)) == 1_577_934_245_600)
        #expect(ISOTimestamp.milliseconds(Array("2020-01-02T03:04:05.123456789Z".utf8)) == 1_577_934_245_123)
        #expect(ISOTimestamp.milliseconds(Array("1969-12-31T23:59:59Z".utf8)) == -1000)
        for bad in ["2020-13-01", "2020-01-02T25:00", "2020-01-02X", "20-01-02", "2020-01-02T03:04:05.Z"] {
            #expect(ISOTimestamp.milliseconds(Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(ArrowOutput.decimal(Array("400".utf8), precision: 4, scale: 2) == 400)
        #expect(ArrowOutput.decimal(Array("-4.25".utf8), precision: 4, scale: 2) == -425)
        #expect(ArrowOutput.decimal(Array("12345".utf8), precision: 4, scale: 2) == nil)
        #expect(ArrowOutput.decimal(Array("1.234".utf8), precision: 4, scale: 2) == nil)
        #expect(ArrowOutput.decimal(Array("1e3".utf8), precision: 4, scale: 2) == nil)
        #expect(ArrowOutput.convert(Array("1.5".utf8), to: .double) == .double(1.5))
        #expect(ArrowOutput.convert(Array(" 1.5".utf8), to: .double) == nil)
        #expect(ArrowOutput.convert(Array("TRUE".utf8), to: .bool) == .bool(true))
        #expect(ArrowOutput.convert([0xFF], to: .utf8) == nil)
        #expect(ArrowOutput.convert([], to: .int64) == .null)
    }

    @Test func schemasOutsideWhatAzureOffersAreRefused() {
        for fields in [
            "", "<Field><Type>int32</Type></Field>", "<Field><Type>decimal</Type><Precision>40</Precision><Scale>2</Scale></Field>",
            "<Field><Type>decimal</Type><Precision>4</Precision><Scale>5</Scale></Field>", "<Field><Type>decimal</Type></Field>",
            String(repeating: "<Field><Type>bool</Type></Field>", count: 50),
        ] {
            #expect(throws: QueryRequest.Invalid.self, "\(fields)") { try Self.arrowRequest("SELECT * from BlobStorage", fields: fields) }
        }
        // Arrow is an output format only.
        #expect(throws: QueryRequest.Invalid.self) {
            try QueryRequest.parse(
                Data(
                    "<QueryRequest><QueryType>SQL</QueryType><Expression>SELECT * from BlobStorage</Expression><InputSerialization><Format><Type>arrow</Type></Format></InputSerialization></QueryRequest>"
                        .utf8))
        }
    }
}
