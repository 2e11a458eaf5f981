import Foundation

/// The body of a Query Blob Contents answer: an Avro object container file whose records are a
/// union of result data, errors, progress and the end (docs/PROTOCOL.md §7, "Query Blob
/// Contents"). Azure writes one record per block, uncompressed; the SDKs read the records with
/// the writer's schema, which travels in the file's header.
struct QueryResultStream {
    /// The writer's schema: the four records' names and fields as Azure sends them.
    static let schema = """
        [{"type":"record","name":"com.microsoft.azure.storage.queryBlobContents.resultData",\
        "fields":[{"name":"data","type":"bytes"}]},\
        {"type":"record","name":"com.microsoft.azure.storage.queryBlobContents.error",\
        "fields":[{"name":"fatal","type":"boolean"},{"name":"name","type":"string"},\
        {"name":"description","type":"string"},{"name":"position","type":"long"}]},\
        {"type":"record","name":"com.microsoft.azure.storage.queryBlobContents.progress",\
        "fields":[{"name":"bytesScanned","type":"long"},{"name":"totalBytes","type":"long"}]},\
        {"type":"record","name":"com.microsoft.azure.storage.queryBlobContents.end",\
        "fields":[{"name":"totalBytes","type":"long"}]}]
        """

    /// Separates blocks; any 16 bytes, chosen per answer.
    let sync: [UInt8]

    init(sync: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255) }) {
        precondition(sync.count == 16)
        self.sync = sync
    }

    /// The file's header: magic, the metadata map (the schema alone: no codec means none), the
    /// sync marker.
    func header() -> Data {
        var out = Data("Obj".utf8)
        out.append(1)
        Self.long(1, into: &out)
        Self.bytes(Data("avro.schema".utf8), into: &out)
        Self.bytes(Data(Self.schema.utf8), into: &out)
        Self.long(0, into: &out)
        out.append(contentsOf: sync)
        return out
    }

    /// A block holding result bytes.
    func data(_ bytes: Data) -> Data {
        var datum = Data()
        Self.long(0, into: &datum)
        Self.bytes(bytes, into: &datum)
        return block(datum)
    }

    /// A block holding an error: `fatal` ends the query after it.
    func error(_ error: QueryRecordError) -> Data {
        var datum = Data()
        Self.long(1, into: &datum)
        datum.append(error.fatal ? 1 : 0)
        Self.bytes(Data(error.name.utf8), into: &datum)
        Self.bytes(Data(error.description.utf8), into: &datum)
        Self.long(Int64(error.position), into: &datum)
        return block(datum)
    }

    /// A block saying how far the scan is.
    func progress(scanned: Int, total: Int) -> Data {
        var datum = Data()
        Self.long(2, into: &datum)
        Self.long(Int64(scanned), into: &datum)
        Self.long(Int64(total), into: &datum)
        return block(datum)
    }

    /// The last block.
    func end(total: Int) -> Data {
        var datum = Data()
        Self.long(3, into: &datum)
        Self.long(Int64(total), into: &datum)
        return block(datum)
    }

    private func block(_ datum: Data) -> Data {
        var out = Data()
        Self.long(1, into: &out)
        Self.long(Int64(datum.count), into: &out)
        out.append(datum)
        out.append(contentsOf: sync)
        return out
    }

    /// Avro's `long`: zig-zag, then 7 bits a byte, low bits first.
    static func long(_ value: Int64, into out: inout Data) {
        var n = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        while n >= 0x80 {
            out.append(UInt8(n & 0x7F) | 0x80)
            n >>= 7
        }
        out.append(UInt8(n))
    }

    /// Avro's `bytes` and `string`: the length, then the bytes.
    static func bytes(_ value: Data, into out: inout Data) {
        long(Int64(value.count), into: &out)
        out.append(value)
    }
}

/// An error reported inside a query's answer (the request itself succeeded): a record that
/// could not be read or evaluated. Non-fatal errors skip the record; a fatal one ends the query.
struct QueryRecordError: Error, Equatable, Sendable {
    var fatal: Bool
    var name: String
    var description: String
    /// The blob offset of the record.
    var position: Int
}
