import Foundation
import StorageProtocol

/// How much OData metadata a Table response carries, from the `Accept` header.
enum MetadataLevel: Sendable {
    case none, minimal, full

    init(accept: String?) {
        let accept = accept ?? ""
        if accept.contains("odata=nometadata") {
            self = .none
        } else if accept.contains("odata=fullmetadata") {
            self = .full
        } else {
            self = .minimal
        }
    }

    var contentType: String {
        switch self {
        case .none: "application/json;odata=nometadata;streaming=true;charset=utf-8"
        case .minimal: "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
        case .full: "application/json;odata=fullmetadata;streaming=true;charset=utf-8"
        }
    }
}

/// Writes entities as the Table service returns them: keys and Timestamp first, then the
/// properties; `odata.etag` and `Name@odata.type` annotations as the metadata level asks
/// (minimal: only where JSON cannot carry the type).
struct EntityResponseWriter {
    let level: MetadataLevel
    /// `http://host/account`, for `odata.metadata` and `odata.id`.
    let base: String
    let table: String
    /// `$select`: only these properties, a missing one as null.
    var select: [String]?

    func append(_ stored: StoredEntity, to out: inout [UInt8], element: Bool) {
        out.append(UInt8(ascii: "{"))
        var first = true
        func member(_ name: String, _ write: (inout [UInt8]) -> Void) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSONText.appendString(name, to: &out)
            out.append(UInt8(ascii: ":"))
            write(&out)
        }
        let entity = stored.entity
        if element && level != .none {
            member("odata.metadata") { JSONText.appendString("\(base)/$metadata#\(table)/@Element", to: &$0) }
        }
        let path = level == .full ? "\(table)(PartitionKey='\(Self.keyText(entity.partitionKey))',RowKey='\(Self.keyText(entity.rowKey))')" : ""
        if level == .full {
            member("odata.type") { JSONText.appendString("\(base.split(separator: "/").last ?? "").\(table)", to: &$0) }
            member("odata.id") { JSONText.appendString("\(base)/\(path)", to: &$0) }
        }
        if level != .none { member("odata.etag") { JSONText.appendString(stored.etag, to: &$0) } }
        if level == .full {
            member("odata.editLink") { JSONText.appendString(path, to: &$0) }
        }
        func wanted(_ name: String) -> Bool { select.map { $0.contains { $0.isExactly(name) } } ?? true }
        if wanted("PartitionKey") { member("PartitionKey") { JSONText.appendString(entity.partitionKey, to: &$0) } }
        if wanted("RowKey") { member("RowKey") { JSONText.appendString(entity.rowKey, to: &$0) } }
        if wanted("Timestamp") {
            if level == .full { member("Timestamp@odata.type") { JSONText.appendString("Edm.DateTime", to: &$0) } }
            member("Timestamp") { JSONText.appendString(stored.timestamp.iso8601, to: &$0) }
        }
        let names = select?.filter { !JSONParser.isKeyOrTimestamp($0) } ?? entity.sortedPropertyNames
        for name in names {
            guard let value = entity.properties[name] else {
                member(name) { $0 += Array("null".utf8) }
                continue
            }
            if annotates(value) { member(name + "@odata.type") { JSONText.appendString(value.type.rawValue, to: &$0) } }
            member(name) { Self.appendValue(value, to: &$0) }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Appends a queried row: from its stored bytes when no `$select` or full metadata asks
    /// for more (``StoredPropertiesTranscoder``), else decoded (`decoded` when the filter
    /// already did).
    func append(_ row: StoredRow, decoded: StoredEntity?, to out: inout [UInt8]) throws {
        if select == nil && level != .full {
            let mark = out.count
            out.append(UInt8(ascii: "{"))
            if level != .none {
                out += Self.etagMember
                Self.appendETag(row.timestamp, to: &out)
                out.append(UInt8(ascii: ","))
            }
            out += Self.partitionKeyMember
            JSONText.appendString(row.partitionKey, to: &out)
            out += Self.rowKeyMember
            JSONText.appendString(row.rowKey, to: &out)
            out += Self.timestampMember
            row.timestamp.appendISO8601(to: &out)
            out.append(UInt8(ascii: "\""))
            if StoredPropertiesTranscoder.append(row.body, level: level, to: &out) {
                out.append(UInt8(ascii: "}"))
                return
            }
            out.removeSubrange(mark...)
        }
        append(try decoded ?? row.decoded(), to: &out, element: false)
    }

    private static let etagMember = Array(#""odata.etag":"#.utf8)
    private static let partitionKeyMember = Array(#""PartitionKey":"#.utf8)
    private static let rowKeyMember = Array(#","RowKey":"#.utf8)
    private static let timestampMember = Array(#","Timestamp":""#.utf8)

    /// The ETag as a JSON string, `"W/\"datetime'…'\""`, written straight into `out`.
    static func appendETag(_ timestamp: EdmDateTime, to out: inout [UInt8]) {
        out += Array(#""W/\"datetime'"#.utf8)
        var time: [UInt8] = []
        time.reserveCapacity(28)
        timestamp.appendISO8601(to: &time)
        for byte in time {
            if byte == UInt8(ascii: ":") { out += [UInt8(ascii: "%"), UInt8(ascii: "3"), UInt8(ascii: "A")] } else { out.append(byte) }
        }
        out += Array(#"'\"""#.utf8)
    }

    private func annotates(_ value: EdmValue) -> Bool {
        switch (level, value) {
        case (.none, _), (_, .string), (_, .int32), (_, .boolean): false
        case (.full, .double): true
        case (.minimal, .double(let d)): !d.isFinite
        default: true
        }
    }

    static func appendValue(_ value: EdmValue, to out: inout [UInt8]) {
        switch value {
        case .string(let s): JSONText.appendString(s, to: &out)
        case .int32(let v): out += Array(String(v).utf8)
        case .double(let v) where v.isFinite: out += Array(value.text.utf8)
        case .boolean(let v): out += Array((v ? "true" : "false").utf8)
        default: JSONText.appendString(value.text, to: &out)
        }
    }

    /// A key as it appears inside `'…'` in a URL: quotes doubled.
    static func keyText(_ key: String) -> String {
        key.utf8.contains(UInt8(ascii: "'")) ? key.replacingOccurrences(of: "'", with: "''") : key
    }
}
