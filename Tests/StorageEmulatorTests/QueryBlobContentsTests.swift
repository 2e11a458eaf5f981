import Foundation
import PropertyBased
import Testing

@testable import StorageEmulator

/// Query Blob Contents' parts: CSV written and read back is the same fields; a query's answer
/// does not depend on how the blob's bytes are cut into pieces; expressions parse to what they
/// say and what is not implemented (or too big) is refused; the Avro encoding is Avro's.
@Suite struct QueryBlobContentsTests {
    /// Fields drawn from bytes that include every separator, quote and escape in play.
    static let alphabet = Array("ab,;\"'\\\r\n.%x".utf8)
    static let fieldByte = Gen.int(in: 0...(alphabet.count - 1)).map { alphabet[$0] }

    @Test func csvWrittenIsReadBack() async {
        let formats = [
            DelimitedText(),
            DelimitedText(
                columnSeparator: Array(";".utf8), fieldQuote: Array("'".utf8), recordSeparator: Array(".".utf8), escapeChar: Array("\\".utf8)),
            DelimitedText(columnSeparator: Array(",".utf8), fieldQuote: [], recordSeparator: Array("%".utf8), escapeChar: Array("\\".utf8)),
            DelimitedText(recordSeparator: Array("\r\n".utf8)),
        ]
        let input = zip(Self.fieldByte.array(of: 0...6).array(of: 1...5).array(of: 1...6), Gen.int(in: 0...3))
        await propertyCheck(input: input) { records, which in
            let format = formats[which]
            var written = Data()
            for fields in records { format.write(fields, into: &written) }
            let bytes = [UInt8](written)
            var read: [[[UInt8]]] = []
            var at = 0
            while at < bytes.count {
                guard case .record(let fields, let next) = format.scan(bytes, from: at, atEnd: true) else {
                    Issue.record("no record at \(at)")
                    return
                }
                read.append(fields)
                at = next
            }
            #expect(read == records)
        }
    }

    /// The data, errors and totals of an answer, decoded from its Avro blocks.
    static func run(_ request: QueryRequest, _ blob: [UInt8], pieces: Int, work: Int = QueryRun.maxWork) -> (
        data: [UInt8], errors: [QueryRecordError]
    ) {
        var run = QueryRun(request: request, totalBytes: blob.count, work: work)
        let size = max(1, blob.count / max(1, pieces))
        var data: [UInt8] = []
        var errors: [QueryRecordError] = []
        var index = 0
        repeat {
            let end = min(index + size, blob.count)
            let blocks = run.take(Data(blob[index..<end]), atEnd: end == blob.count)
            let (d, e) = AvroBlocks.decode([UInt8](blocks), sync: run.stream.sync)
            data += d
            errors += e
            index = end
        } while index < blob.count
        return (data, errors)
    }

    @Test func anAnswerDoesNotDependOnThePieces() async throws {
        let csv = try QueryRequest.parse(
            Data(
                "<QueryRequest><QueryType>SQL</QueryType><Expression>SELECT _2 FROM BlobStorage WHERE _1 &gt; 250</Expression></QueryRequest>"
                    .utf8))
        let json = try QueryRequest.parse(
            Data(
                """
                <QueryRequest><QueryType>SQL</QueryType><Expression>SELECT a from BlobStorage where b != 'x'</Expression>\
                <InputSerialization><Format><Type>json</Type><JsonTextConfiguration><RecordSeparator>
                </RecordSeparator></JsonTextConfiguration></Format></InputSerialization></QueryRequest>
                """.utf8))
        let rows = Gen.int(in: 0...999).array(of: 2...4).array(of: 0...30)
        await propertyCheck(input: zip(rows, Gen.int(in: 1...40), Gen.bool)) { rows, pieces, asJSON in
            let text: String
            if asJSON {
                text = rows.map { "{\"a\": \($0[0]), \"b\": \"\($0[1] % 3 == 0 ? "x" : "y")\"}" }.joined(separator: "\n")
            } else {
                text = rows.map { $0.map(String.init).joined(separator: ",") }.joined(separator: "\r\n")
            }
            let blob = Array(text.utf8)
            let whole = Self.run(asJSON ? json : csv, blob, pieces: 1)
            let cut = Self.run(asJSON ? json : csv, blob, pieces: pieces)
            #expect(cut.data == whole.data)
            #expect(cut.errors == whole.errors)
            let expected =
                asJSON
                ? rows.filter { $0[1] % 3 != 0 }.map { "{\"a\":\($0[0])}\n" }.joined()
                : rows.filter { $0[0] > 250 }.map { "\($0[1])\n" }.joined()
            #expect(String(decoding: whole.data, as: UTF8.self) == expected)
        }
    }

    @Test func aValueThatIsNoNumberIsANonFatalError() throws {
        // The record and query of an answer Azure gave (the .NET SDK's recorded
        // QueryAsync_NonFatalError): the first record is skipped, reported at its offset.
        let request = try QueryRequest.parse(
            Data(
                "<QueryRequest><QueryType>SQL</QueryType><Expression>SELECT _1 from BlobStorage WHERE _2 &gt; 250;</Expression></QueryRequest>"
                    .utf8))
        let (data, errors) = Self.run(request, Array("100,pizza,300,400\n300,400,500,600\n".utf8), pieces: 1)
        #expect(data == Array("300\n".utf8))
        #expect(errors == [QueryRecordError(fatal: false, name: "InvalidTypeConversion", description: "Invalid type conversion.", position: 0)])
    }

    @Test func jsonThatIsNotJSONIsAFatalError() throws {
        let request = try QueryRequest.parse(
            Data(
                "<QueryRequest><QueryType>SQL</QueryType><Expression>SELECT * from BlobStorage;</Expression><InputSerialization><Format><Type>json</Type></Format></InputSerialization></QueryRequest>"
                    .utf8))
        // Azure's own description for this blob (the .NET SDK's recorded QueryAsync_FatalError).
        let (_, errors) = Self.run(request, Array("100,200,300,400\n300,400,500,600\n".utf8), pieces: 1)
        #expect(
            errors == [
                QueryRecordError(
                    fatal: true, name: "ParseError", description: "Unexpected token ',' at [byte: 3]. Expecting tokens '{', or '['.", position: 0)
            ])
        // Nesting is bounded; so is a record's length.
        let deep = Array(repeating: UInt8(ascii: "["), count: 10_000)
        #expect(Self.run(request, deep, pieces: 7).errors.first?.fatal == true)
        let long = Array("{\"a\":\"".utf8) + Array(repeating: UInt8(ascii: "x"), count: QueryRun.maxRecordBytes + (1 << 20))
        #expect(Self.run(request, long, pieces: 40).errors.map(\.name) == ["RecordTooLarge"])
    }

    @Test func expressionsParseToWhatTheySay() throws {
        let parsed = try QueryExpression(
            parsing: "select \"Repo Path\", _3 from blobstorage where not (_1 >= -2.5 or x like 'a%') and y is not null limit 10;")
        #expect(parsed.projection == .columns([.name("Repo Path"), .ordinal(3)]))
        #expect(parsed.limit == 10)
        #expect(
            parsed.condition
                == .and(
                    .not(
                        .or(
                            .compare(.column(.ordinal(1)), .greaterOrEqual, .literal(.number(-2.5, text: "-2.5"))),
                            .like(.column(.name("x")), pattern: "a%", negated: false))),
                    .isNull(.column(.name("y")), negated: true)))
        #expect(try QueryExpression(parsing: "SELECT COUNT(*) FROM BlobStorage").projection == .count)
        for refused in [
            "SELECT * FROM BlobStorage[*].a", "SELECT SUM(_1) FROM BlobStorage", "SELECT sys.split(10) FROM BlobStorage", "SELECT * FROM t",
            "SELECT * FROM BlobStorage WHERE", "SELECT * FROM BlobStorage WHERE _1 = 'open", "DELETE FROM BlobStorage",
            "SELECT * FROM BlobStorage WHERE " + String(repeating: "(", count: 100) + "_1 = 1" + String(repeating: ")", count: 100),
            "SELECT " + (1...50).map { "_\($0)" }.joined(separator: ",") + " FROM BlobStorage",
        ] {
            #expect(throws: QueryExpression.Invalid.self, "\(refused)") { try QueryExpression(parsing: refused) }
        }
    }

    @Test func likeMatchesAsSQLDoes() {
        func like(_ text: String, _ pattern: String) -> Bool {
            var work = QueryRun.maxWork
            return QueryEvaluation.like(Array(text.utf8)[...], Array(pattern.utf8)[...], work: &work) == true
        }
        #expect(like("storage", "st%"))
        #expect(like("storage", "%age"))
        #expect(like("storage", "s_o%e"))
        #expect(!like("storage", "s_a%"))
        #expect(like("", "%"))
        #expect(!like("a", ""))
        // A hostile pattern stays linear-ish: many %s over a long text finish at once.
        #expect(!like(String(repeating: "a", count: 5_000), String(repeating: "%a", count: 200) + "b"))
        // Every step is counted: a budget spent answers nil (the query then ends, fatal).
        var little = 100
        #expect(QueryEvaluation.like(Array(repeating: UInt8(ascii: "a"), count: 1_000)[...], Array("%ab".utf8)[...], work: &little) == nil)
    }

    @Test func aStrangersQueryIsBoundedInCPUAndOutput() throws {
        // A long OR chain is refused when parsed (evaluation recurses per level).
        let chain = "SELECT * FROM BlobStorage WHERE " + (1...65).map { "_1 = '\($0)'" }.joined(separator: " OR ")
        #expect(throws: QueryExpression.Invalid.self) { try QueryExpression(parsing: chain) }
        #expect(throws: QueryExpression.Invalid.self) {
            try QueryExpression(parsing: "SELECT * FROM BlobStorage WHERE _1 LIKE '" + String(repeating: "%a", count: 200) + "'")
        }
        // LIKE over big records spends its budget and ends in one fatal error.
        let like = try QueryRequest.parse(
            Data(
                "<QueryRequest><QueryType>SQL</QueryType><Expression>SELECT * FROM BlobStorage WHERE _1 LIKE '%\(String(repeating: "a", count: 200))b'</Expression></QueryRequest>"
                    .utf8))
        let record = Array(repeating: UInt8(ascii: "a"), count: 64 << 10) + [0x0A]
        let (_, errors) = Self.run(like, Array((0..<3).map { _ in record }.joined()), pieces: 4, work: 1 << 20)
        #expect(errors.map(\.name) == ["QueryTooComplex"])
        // A 1 MiB header name repeated into every JSON record: output goes out in chunks, each
        // about a megabyte, never the whole answer of a piece at once.
        let amplify = try QueryRequest.parse(
            Data(
                """
                <QueryRequest><QueryType>SQL</QueryType><Expression>SELECT * FROM BlobStorage</Expression>\
                <InputSerialization><Format><Type>delimited</Type><DelimitedTextConfiguration><HasHeaders>true</HasHeaders>\
                </DelimitedTextConfiguration></Format></InputSerialization><OutputSerialization><Format><Type>json</Type>\
                </Format></OutputSerialization></QueryRequest>
                """.utf8))
        var run = QueryRun(request: amplify, totalBytes: 0)
        run.feed(Data(Array(repeating: UInt8(ascii: "n"), count: 300_000) + [0x0A] + Array(repeating: Array("a\n".utf8), count: 20).joined()))
        var largest = 0
        var drains = 0
        while true {
            let (blocks, done) = run.drain(atEnd: true)
            largest = max(largest, blocks.count)
            drains += 1
            if done { break }
        }
        #expect(largest < 2 << 20 && drains >= 5)
    }

    @Test func avroLongsAreZigZagVarints() {
        func encoded(_ n: Int64) -> [UInt8] {
            var out = Data()
            QueryResultStream.long(n, into: &out)
            return [UInt8](out)
        }
        #expect(encoded(0) == [0])
        #expect(encoded(-1) == [1])
        #expect(encoded(1) == [2])
        #expect(encoded(64) == [0x80, 0x01])
        #expect(encoded(1024) == [0x80, 0x10])
    }

    @Test func aLongRecordIsScannedInLinearTimeAndNotToldTooLargeEarly() throws {
        // Found by an attacker: each 256 KiB piece rescanned the pending record from its start.
        let request = try QueryRequest.parse(
            Data("<QueryRequest><QueryType>SQL</QueryType><Expression>SELECT COUNT(*) FROM BlobStorage</Expression></QueryRequest>".utf8))
        // Light on CPU (it runs beside timing tests): 1 MiB in 32 KiB pieces — rescanning from
        // the record's start would scan 16 MiB.
        let record = Array(repeating: UInt8(ascii: "x"), count: 1 << 20) + Array("\n".utf8)
        let blob = record + Array("a\nb\n".utf8)
        var run = QueryRun(request: request, totalBytes: blob.count)
        var answer = Data()
        var index = 0
        while index < blob.count {
            let end = min(index + (32 << 10), blob.count)
            answer.append(run.take(Data(blob[index..<end]), atEnd: end == blob.count))
            index = end
        }
        let (data, errors) = AvroBlocks.decode([UInt8](answer), sync: run.stream.sync)
        #expect(errors.isEmpty && data == Array("3\n".utf8))
        #expect(run.bytesScanned <= 4 * blob.count, "\(run.bytesScanned) bytes scanned for \(blob.count)")
    }

    @Test func oneRecordsAnswerIsBounded() throws {
        // A 400 KiB field selected 49 times would be a 19.6 MiB answer for one record.
        let columns = Array(repeating: "_1", count: 49).joined(separator: ",")
        let request = try QueryRequest.parse(
            Data("<QueryRequest><QueryType>SQL</QueryType><Expression>SELECT \(columns) FROM BlobStorage</Expression></QueryRequest>".utf8))
        let blob = Array(repeating: UInt8(ascii: "y"), count: 400 << 10) + Array("\n".utf8)
        let (_, errors) = Self.run(request, blob, pieces: 4)
        #expect(errors.map(\.name) == ["RecordTooLarge"] && errors.allSatisfy(\.fatal))
    }
}

/// Reads back the blocks ``QueryResultStream`` writes (one datum each) for the tests.
enum AvroBlocks {
    static func decode(_ bytes: [UInt8], sync: [UInt8]) -> ([UInt8], [QueryRecordError]) {
        var i = 0
        if bytes.starts(with: Array("Obj".utf8) + [1]) {
            i = 4
            _ = long(bytes, &i)  // one metadata entry
            for _ in 0..<2 { i += Int(long(bytes, &i)) }
            _ = long(bytes, &i)
            i += 16
        }
        var data: [UInt8] = []
        var errors: [QueryRecordError] = []
        while i < bytes.count {
            _ = long(bytes, &i)
            let size = Int(long(bytes, &i))
            var d = i
            switch long(bytes, &d) {
            case 0:
                let n = Int(long(bytes, &d))
                data += bytes[d..<(d + n)]
            case 1:
                let fatal = bytes[d] == 1
                d += 1
                let nameCount = Int(long(bytes, &d))
                let name = String(decoding: bytes[d..<(d + nameCount)], as: UTF8.self)
                d += nameCount
                let descriptionCount = Int(long(bytes, &d))
                let description = String(decoding: bytes[d..<(d + descriptionCount)], as: UTF8.self)
                d += descriptionCount
                errors.append(QueryRecordError(fatal: fatal, name: name, description: description, position: Int(long(bytes, &d))))
            default: break
            }
            i += size
            precondition(Array(bytes[i..<(i + 16)]) == sync)
            i += 16
        }
        return (data, errors)
    }

    static func long(_ bytes: [UInt8], _ i: inout Int) -> Int64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = bytes[i]
            i += 1
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { break }
            shift += 7
        }
        return Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }
}
