import Foundation

/// Runs a query over a blob's bytes as they are read, piece by piece, and writes the answer's
/// Avro blocks: per stretch the result data (the first always, later ones when they have any),
/// that stretch's errors, and when a piece is used up its progress; the end last. Memory stays at
/// a piece, one record (at most ``maxRecordBytes``) and ``outputChunkBytes`` of output (plus one
/// record's); the CPU a query may spend is bounded (``maxWork``). A stranger writes both the
/// expression and the blob.
struct QueryRun: Sendable {
    let request: QueryRequest
    let totalBytes: Int
    let stream: QueryResultStream

    /// A record longer than this is a fatal error.
    static let maxRecordBytes = 4 << 20
    /// One record's answer longer than this is a fatal error.
    static let maxAnswerRecordBytes = 16 << 20
    /// Output is answered once it reaches this much (a small blob's answer is one data record).
    static let outputChunkBytes = 1 << 20
    /// The steps LIKE may take over the whole query; past them the query ends in a fatal error.
    static let maxWork = 1 << 28

    private var pending: [UInt8] = []
    /// The blob offset of `pending`'s first byte.
    private var base = 0
    private var header: [[UInt8]]?
    private var sawHeader = false
    private var wroteHeader = false
    private var emitted = 0
    private var count = 0
    private var finished = false
    private var answeredData = false
    private var data = Data()
    private var errors: [QueryRecordError] = []
    private var fed = 0
    private var workLeft = QueryRun.maxWork
    /// The rows of an Arrow answer not yet in a batch.
    private var arrow: ArrowOutput?
    /// Where the record being handled starts.
    private var recordPosition = 0
    /// The blob offset the pending bytes must reach before an incomplete record is scanned again.
    private var rescanAt = 0
    /// Bytes handed to the record scanners so far: linear in the blob, never quadratic.
    private(set) var bytesScanned = 0

    init(request: QueryRequest, totalBytes: Int, stream: QueryResultStream = QueryResultStream(), work: Int = QueryRun.maxWork) {
        self.request = request
        self.totalBytes = totalBytes
        self.stream = stream
        workLeft = work
        if case .arrow(let fields) = request.output {
            let output = ArrowOutput(fields: fields)
            data = output.start()
            arrow = output
        }
    }

    /// The header block.
    func start() -> Data { stream.header() }

    /// Takes the next piece of the blob; ``drain(atEnd:)`` then answers it.
    mutating func feed(_ piece: Data) {
        fed += piece.count
        if !finished { pending.append(contentsOf: piece) }
    }

    /// Answers what the pieces fed so far hold, at most about ``outputChunkBytes`` of data at a
    /// time: `pieceDone` says whether the piece is used up (else call again). `atEnd`: the last
    /// piece was fed.
    mutating func drain(atEnd: Bool) -> (blocks: Data, pieceDone: Bool) {
        let exhausted = finished || consume(atEnd: atEnd)
        let pieceDone = exhausted || finished
        var out = Data()
        if pieceDone, atEnd, !finished, case .count = request.expression.projection {
            writeRecord(values: [Array(String(count).utf8)], labels: ["_1"], numeric: true)
        }
        if let batch = arrow?.flush() { data.append(batch) }
        if !data.isEmpty || !answeredData {
            out.append(stream.data(data))
            answeredData = true
            data = Data()
        }
        for error in errors { out.append(stream.error(error)) }
        errors = []
        if pieceDone {
            out.append(stream.progress(scanned: fed, total: totalBytes))
            if atEnd { out.append(stream.end(total: totalBytes)) }
        }
        return (out, pieceDone)
    }

    /// Feeds a piece and drains it whole (tests; the server drains in steps).
    mutating func take(_ piece: Data, atEnd: Bool) -> Data {
        feed(piece)
        var out = Data()
        while true {
            let (blocks, done) = drain(atEnd: atEnd)
            out.append(blocks)
            if done { return out }
        }
    }

    /// Handles the complete records pending, until the output reaches a chunk; answers whether
    /// all of them were handled.
    private mutating func consume(atEnd: Bool) -> Bool {
        var position = 0
        var exhausted = true
        loop: while !finished {
            if data.count + (arrow?.pendingBytes ?? 0) >= Self.outputChunkBytes {
                exhausted = false
                break loop
            }
            // An incomplete record is scanned again only once it has doubled (or passed the
            // record bound, to be told too large): scanning from its start on every 256 KiB
            // piece made a 4 MiB record cost quadratic time (found by an attacker: 16 s of CPU
            // for one COUNT(*)).
            if !atEnd, base + pending.count < rescanAt { break loop }
            bytesScanned += pending.count - position
            switch request.input {
            case .arrow:
                // Never: QueryRequest.parse reads no Arrow input.
                fail(QueryRecordError(fatal: true, name: "InvalidInputFormat", description: "Arrow is an output format.", position: 0))
            case .delimited(let text):
                if position >= pending.count { break loop }
                switch text.scan(pending, from: position, atEnd: atEnd) {
                case .incomplete:
                    rescanAt = base + position + min(2 * (pending.count - position), Self.maxRecordBytes + 1)
                    break loop
                case .record(let fields, let next):
                    let at = base + position
                    position = next
                    if text.hasHeaders && !sawHeader {
                        sawHeader = true
                        header = fields
                        // A name the header does not hold would fail every record: said once.
                        if let unknown = QueryEvaluation.unknownNames(request.expression, header: fields).first {
                            fail(
                                QueryRecordError(
                                    fatal: true, name: "InvalidColumnName", description: "The header has no column named '\(unknown)'.", position: at)
                            )
                        }
                        continue
                    }
                    handle(.delimited(fields), at: at)
                }
            case .json(let separator):
                switch JSONRecordReader(recordSeparator: separator).scan(pending, from: position, atEnd: atEnd, base: base) {
                case .incomplete:
                    rescanAt = base + position + min(2 * (pending.count - position), Self.maxRecordBytes + 1)
                    break loop
                case .done:
                    break loop
                case .record(let value, let next):
                    let at = base + position
                    position = next
                    handle(.json(value), at: at)
                case .invalid(let description, _):
                    // The description names the byte; the position, as in Azure's answers, is
                    // where the piece being parsed began.
                    fail(QueryRecordError(fatal: true, name: "ParseError", description: description, position: base))
                }
            }
        }
        if exhausted, !finished, pending.count - position > Self.maxRecordBytes {
            fail(
                QueryRecordError(
                    fatal: true, name: "RecordTooLarge",
                    description: "A record at [byte: \(base + position)] is longer than \(Self.maxRecordBytes) bytes.", position: base + position))
        }
        pending.removeFirst(min(position, pending.count))
        base += position
        if finished { pending = [] }
        return exhausted
    }

    private mutating func fail(_ error: QueryRecordError) {
        errors.append(error)
        finished = true
    }

    /// A record read from the blob.
    enum Record {
        case delimited([[UInt8]])
        case json(QueryJSON)
    }

    private mutating func handle(_ record: Record, at position: Int) {
        recordPosition = position
        if let limit = request.expression.limit, emitted >= limit {
            finished = true
            return
        }
        do {
            if let condition = request.expression.condition {
                guard try QueryEvaluation.holds(condition, in: record, header: header, work: &workLeft) == true else { return }
            }
        } catch {
            let reported = QueryRecordError(fatal: error.fatal, name: error.name, description: error.description, position: position)
            if error.fatal { fail(reported) } else { errors.append(reported) }
            return
        }
        switch request.expression.projection {
        case .count:
            count += 1
            emitted += 1
        case .all:
            emitted += 1
            switch record {
            case .delimited(let fields):
                writeRecord(values: fields, labels: labels(count: fields.count))
            case .json(let value):
                writeJSON(value)
            }
        case .columns(let columns):
            switch record {
            case .delimited(let fields):
                var values: [[UInt8]] = []
                for column in columns {
                    guard let value = QueryEvaluation.field(column, of: fields, header: header) else {
                        errors.append(QueryEvaluation.missing(column, at: position))
                        return
                    }
                    values.append(value)
                }
                if tooLarge(values.reduce(0) { $0 + $1.count }, at: position) { return }
                emitted += 1
                writeRecord(values: values, labels: columns.map(\.label))
            case .json(let value):
                let members = columns.compactMap { column -> (String, QueryJSON)? in
                    guard case .name(let name) = column, let found = value.member(name) else { return nil }
                    return (name, found)
                }
                // A member selected many times repeats its bytes: measured, stopping past the bound.
                var size = 0
                for (_, member) in members where size <= Self.maxAnswerRecordBytes {
                    var bytes = Data()
                    member.write(into: &bytes)
                    size += bytes.count
                }
                if tooLarge(size, at: position) { return }
                emitted += 1
                writeJSON(.object(members), values: members.map(\.1))
            }
        }
    }

    /// Ends the query when one record's answer (its selected columns, a column named many
    /// times) is longer than ``maxAnswerRecordBytes``: a 4 MiB record selected 49 times would
    /// otherwise be a 196 MiB answer in memory.
    private mutating func tooLarge(_ bytes: Int, at position: Int) -> Bool {
        guard bytes > Self.maxAnswerRecordBytes else { return false }
        fail(
            QueryRecordError(
                fatal: true, name: "RecordTooLarge",
                description: "The answer to the record at [byte: \(position)] is longer than \(Self.maxAnswerRecordBytes) bytes.", position: position)
        )
        return true
    }

    private func labels(count: Int) -> [String] {
        (0..<count).map { n in
            if let header, n < header.count { return String(decoding: header[n], as: UTF8.self) }
            return "_\(n + 1)"
        }
    }

    /// Fields from a CSV record (or a count) in the answer's format.
    private mutating func writeRecord(values: [[UInt8]], labels: [String], numeric: Bool = false) {
        switch request.output {
        case .delimited(let text):
            writeHeaderIfAsked(text, labels: labels)
            text.write(values, into: &data)
        case .json(let separator):
            // A count is a number; fields read from CSV are strings.
            let members = zip(labels, values).map { label, value in
                (label, numeric ? QueryJSON.number(String(decoding: value, as: UTF8.self)) : QueryJSON.string(String(decoding: value, as: UTF8.self)))
            }
            QueryJSON.object(members).write(into: &data)
            data.append(contentsOf: separator)
        case .arrow:
            addArrow(values.map { $0 })
        }
    }

    /// A record's values into the Arrow answer; one that does not fit its schema is an error.
    private mutating func addArrow(_ values: [[UInt8]?]) {
        do throws(ArrowOutput.Refusal) {
            try arrow?.add(values)
        } catch {
            switch error {
            case .conversion:
                let failure = QueryEvaluation.typeConversion
                errors.append(QueryRecordError(fatal: false, name: failure.name, description: failure.description, position: recordPosition))
            case .columns(let record, let schema):
                fail(
                    QueryRecordError(
                        fatal: true, name: "InvalidArrowSchema",
                        description:
                            "The Arrow schema has \(schema) field\(schema == 1 ? "" : "s"); a record has \(record) column\(record == 1 ? "" : "s").",
                        position: recordPosition))
            }
        }
    }

    /// A JSON record in the answer's format: CSV takes its members' values.
    private mutating func writeJSON(_ value: QueryJSON, values: [QueryJSON]? = nil) {
        switch request.output {
        case .json(let separator):
            // A record that is no object or array selects nothing: an empty record (as Azure answers).
            switch value {
            case .object, .array: value.write(into: &data)
            default: break
            }
            data.append(contentsOf: separator)
        case .arrow:
            addArrow(Self.parts(value, values: values).map { part -> [UInt8]? in part == .null ? nil : Self.csvField(part) })
        case .delimited(let text):
            text.write(Self.parts(value, values: values).map(Self.csvField), into: &data)
        }
    }

    /// A JSON record's values: those selected, or its members or items, or itself.
    private static func parts(_ value: QueryJSON, values: [QueryJSON]?) -> [QueryJSON] {
        if let values { return values }
        switch value {
        case .object(let members): return members.map(\.1)
        case .array(let items): return items
        default: return [value]
        }
    }

    private static func csvField(_ value: QueryJSON) -> [UInt8] {
        switch value {
        case .null: return []
        case .string(let s): return Array(s.utf8)
        case .number(let text): return Array(text.utf8)
        case .bool(let b): return Array((b ? "true" : "false").utf8)
        default:
            var out = Data()
            value.write(into: &out)
            return Array(out)
        }
    }

    /// An answer in CSV with headers starts with the columns' names.
    private mutating func writeHeaderIfAsked(_ text: DelimitedText, labels: [String]) {
        guard text.hasHeaders, !wroteHeader else { return }
        wroteHeader = true
        if case .all = request.expression.projection, header == nil { return }
        text.write(labels.map { Array($0.utf8) }, into: &data)
    }
}
