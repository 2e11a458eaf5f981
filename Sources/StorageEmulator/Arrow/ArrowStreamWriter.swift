import Foundation

/// Writes an Apache Arrow IPC stream (format version V5): a schema message, then record batch
/// messages, each framed as `0xFFFFFFFF`, the metadata's length, the FlatBuffers metadata padded
/// to 8 bytes, and the batch's body (docs/PROTOCOL.md §7, "Arrow"). The metadata is built in the
/// order Arrow's writers build it, so an answer matches Azure's byte for byte (the SDKs' tests
/// compare them). No dictionaries, no compression; every buffer 8-byte aligned.
struct ArrowStreamWriter: Sendable {
    let fields: [ArrowField]
    /// The schema's custom metadata (List Blobs puts its `NextMarker` there).
    var metadata: [(key: String, value: String)] = []

    /// The end-of-stream marker: a continuation and a zero length.
    static let endOfStream = Data([0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0])

    // Arrow's enumerations (format/Schema.fbs, format/Message.fbs).
    private enum Header: UInt8 {
        case schema = 1
        case recordBatch = 3
    }
    private static let version: Int16 = 4  // MetadataVersion.V5
    private enum TypeID: UInt8 {
        case int = 2
        case floatingPoint = 3
        case utf8 = 5
        case bool = 6
        case decimal = 7
        case timestamp = 10
        case structure = 13
        case map = 17
    }

    /// The schema message.
    func schema() -> Data {
        var b = FlatBufferBuilder()
        let fieldOffsets = fields.map { Self.field($0, into: &b) }
        let fieldVector = b.vector(ofOffsets: fieldOffsets)
        var metadataVector: Int?
        if !metadata.isEmpty {
            let pairs = metadata.map { pair -> Int in
                let key = b.string(Array(pair.key.utf8))
                let value = b.string(Array(pair.value.utf8))
                b.startTable(fields: 2)
                b.field(1, offset: value)
                b.field(0, offset: key)
                return b.endTable()
            }
            metadataVector = b.vector(ofOffsets: pairs)
        }
        b.startTable(fields: 4)
        if let metadataVector { b.field(2, offset: metadataVector) }
        b.field(1, offset: fieldVector)
        let schema = b.endTable()
        return Self.message(&b, header: .schema, table: schema, body: Data())
    }

    /// A record batch of `rows` rows; `columns[i]` holds field `i`'s cells.
    func batch(rows: Int, columns: [[ArrowValue]]) -> Data {
        precondition(columns.count == fields.count && columns.allSatisfy { $0.count == rows })
        var body = BodyWriter()
        for (field, cells) in zip(fields, columns) { body.column(field.type, cells) }
        var b = FlatBufferBuilder()
        let nodes = b.vector(ofPairs: body.nodes)
        let buffers = b.vector(ofPairs: body.buffers)
        b.startTable(fields: 5)
        b.field(0, Int64(rows), default: 0)
        b.field(2, offset: buffers)
        b.field(1, offset: nodes)
        let batch = b.endTable()
        return Self.message(&b, header: .recordBatch, table: batch, body: body.data)
    }

    private static func message(_ b: inout FlatBufferBuilder, header: Header, table: Int, body: Data) -> Data {
        b.startTable(fields: 5)
        b.field(3, Int64(body.count), default: 0)
        b.field(2, offset: table)
        b.field(0, version, default: 0)
        b.field(1, header.rawValue, default: 0)
        let message = b.endTable()
        b.finish(root: message)
        var metadata = b.bytes
        // The prefix (8 bytes) and the metadata end on an 8-byte boundary.
        while metadata.count % 8 != 0 { metadata.append(0) }
        var out = Data([0xFF, 0xFF, 0xFF, 0xFF])
        withUnsafeBytes(of: Int32(metadata.count).littleEndian) { out.append(contentsOf: $0) }
        out.append(contentsOf: metadata)
        out.append(body)
        return out
    }

    /// A `Field` table: its children first, then its type, name and children vector.
    private static func field(_ field: ArrowField, into b: inout FlatBufferBuilder) -> Int {
        var children: [Int] = []
        if case .stringMap = field.type {
            let key = Self.field(ArrowField(name: "key", type: .utf8, nullable: false), into: &b)
            let value = Self.field(ArrowField(name: "value", type: .utf8, nullable: true), into: &b)
            let entriesChildren = b.vector(ofOffsets: [key, value])
            b.startTable(fields: 0)
            let structType = b.endTable()
            let entriesName = b.string(Array("entries".utf8))
            b.startTable(fields: 7)
            b.field(5, offset: entriesChildren)
            b.field(3, offset: structType)
            b.field(0, offset: entriesName)
            b.field(2, TypeID.structure.rawValue, default: 0)
            children.append(b.endTable())
        }
        let (typeID, type) = Self.type(field.type, into: &b)
        let name = b.string(Array(field.name.utf8))
        let childVector = b.vector(ofOffsets: children)
        b.startTable(fields: 7)
        b.field(5, offset: childVector)
        b.field(3, offset: type)
        b.field(0, offset: name)
        b.field(2, typeID.rawValue, default: 0)
        b.field(1, field.nullable)
        return b.endTable()
    }

    private static func type(_ type: ArrowType, into b: inout FlatBufferBuilder) -> (TypeID, Int) {
        switch type {
        case .int64:
            b.startTable(fields: 2)
            b.field(0, Int32(64), default: 0)
            b.field(1, true)
            return (.int, b.endTable())
        case .bool:
            b.startTable(fields: 0)
            return (.bool, b.endTable())
        case .timestampMilliseconds:
            b.startTable(fields: 2)
            b.field(0, Int16(1), default: 0)  // TimeUnit.MILLISECOND; no time zone (UTC instants)
            return (.timestamp, b.endTable())
        case .utf8:
            b.startTable(fields: 0)
            return (.utf8, b.endTable())
        case .double:
            b.startTable(fields: 1)
            b.field(0, Int16(2), default: 0)  // Precision.DOUBLE
            return (.floatingPoint, b.endTable())
        case .decimal128(let precision, let scale):
            b.startTable(fields: 3)
            b.field(2, Int32(128), default: 128)
            b.field(1, scale, default: 0)
            b.field(0, precision, default: 0)
            return (.decimal, b.endTable())
        case .stringMap:
            b.startTable(fields: 1)
            b.field(0, false)  // keysSorted
            return (.map, b.endTable())
        }
    }
}

/// A record batch's body: its buffers, 8-byte aligned, with the field nodes and buffer
/// locations the metadata lists, depth first.
private struct BodyWriter {
    var data = Data()
    var nodes: [(Int64, Int64)] = []
    var buffers: [(Int64, Int64)] = []

    mutating func column(_ type: ArrowType, _ cells: [ArrowValue]) {
        let nulls = cells.reduce(0) { $0 + ($1 == .null ? 1 : 0) }
        nodes.append((Int64(cells.count), Int64(nulls)))
        buffer(nulls == 0 ? [] : Self.bitmap(cells.map { $0 != .null }))
        switch type {
        case .int64, .timestampMilliseconds:
            var bytes: [UInt8] = []
            bytes.reserveCapacity(cells.count * 8)
            for cell in cells {
                let value: Int64 = if case .integer(let v) = cell { v } else { 0 }
                Self.append(value, to: &bytes)
            }
            buffer(bytes)
        case .double:
            var bytes: [UInt8] = []
            for cell in cells {
                let value: Double = if case .double(let v) = cell { v } else { 0 }
                Self.append(value.bitPattern, to: &bytes)
            }
            buffer(bytes)
        case .decimal128:
            var bytes: [UInt8] = []
            for cell in cells {
                let value: Int128 = if case .decimal(let v) = cell { v } else { 0 }
                Self.append(UInt64(truncatingIfNeeded: value), to: &bytes)
                Self.append(UInt64(truncatingIfNeeded: value >> 64), to: &bytes)
            }
            buffer(bytes)
        case .bool:
            buffer(Self.bitmap(cells.map { if case .bool(true) = $0 { true } else { false } }))
        case .utf8:
            strings(cells.map { if case .utf8(let s) = $0 { s } else { [] } })
        case .stringMap:
            var offsets: [UInt8] = []
            var keys: [[UInt8]] = []
            var values: [ArrowValue] = []
            Self.append(Int32(0), to: &offsets)
            for cell in cells {
                if case .map(let entries) = cell {
                    for entry in entries {
                        keys.append(entry.key)
                        values.append(entry.value.map { .utf8($0) } ?? .null)
                    }
                }
                Self.append(Int32(keys.count), to: &offsets)
            }
            buffer(offsets)
            // The entries struct (never null), then its key and value columns.
            nodes.append((Int64(keys.count), 0))
            buffer([])
            column(.utf8, keys.map { .utf8($0) })
            column(.utf8, values)
        }
    }

    /// A string column's offsets and data buffers.
    private mutating func strings(_ values: [[UInt8]]) {
        var offsets: [UInt8] = []
        var bytes: [UInt8] = []
        Self.append(Int32(0), to: &offsets)
        for value in values {
            bytes += value
            Self.append(Int32(bytes.count), to: &offsets)
        }
        buffer(offsets)
        buffer(bytes)
    }

    private mutating func buffer(_ bytes: [UInt8]) {
        buffers.append((Int64(data.count), Int64(bytes.count)))
        data.append(contentsOf: bytes)
        while data.count % 8 != 0 { data.append(0) }
    }

    private static func bitmap(_ bits: [Bool]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: (bits.count + 7) / 8)
        for (i, bit) in bits.enumerated() where bit { out[i / 8] |= 1 << (i % 8) }
        return out
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
