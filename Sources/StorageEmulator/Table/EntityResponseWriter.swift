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
    /// `account.table`, full metadata's `odata.type`: worked out once per page, not per row.
    private let typeName: String

    init(level: MetadataLevel, base: String, table: String, select: [String]? = nil) {
        self.level = level
        self.base = base
        self.table = table
        self.select = select
        typeName = "\(base.split(separator: "/").last ?? "").\(table)"
    }

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
            member("odata.type") { JSONText.appendString(typeName, to: &$0) }
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

    /// Appends a queried row: from its stored bytes when no `$select` asks for less
    /// (``StoredPropertiesTranscoder``), else decoded (`decoded` when the filter already did).
    /// Full metadata too: a migration reads every page that way (a Double must stay a
    /// Double), and decoding each row for it was a seventh of the emulator's time in a rename.
    func append(_ row: StoredRow, decoded: StoredEntity?, to out: inout [UInt8]) throws {
        if let select, select.allSatisfy(JSONParser.isKeyOrTimestamp) {
            // Keys only (a count, a keys-only listing): all of it is in the row, none of it
            // needs the properties decoded.
            appendHead(row, to: &out)
            var first = true
            func separate() {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
            }
            if wanted("PartitionKey", in: select) {
                separate()
                out += Self.partitionKeyName
                JSONText.appendString(row.partitionKey, to: &out)
            }
            if wanted("RowKey", in: select) {
                separate()
                out += Self.rowKeyName
                JSONText.appendString(row.rowKey, to: &out)
            }
            if wanted("Timestamp", in: select) {
                separate()
                out += level == .full ? Self.typedTimestampName : Self.timestampName
                row.timestamp.appendISO8601(to: &out)
                out.append(UInt8(ascii: "\""))
            }
            out.append(UInt8(ascii: "}"))
            return
        }
        if select == nil {
            let mark = out.count
            appendHead(row, to: &out)
            out += Self.partitionKeyMember
            JSONText.appendString(row.partitionKey, to: &out)
            out += Self.rowKeyMember
            JSONText.appendString(row.rowKey, to: &out)
            out += level == .full ? Self.typedTimestampMember : Self.timestampMember
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

    private func wanted(_ name: String, in select: [String]) -> Bool { select.contains { $0.isExactly(name) } }

    /// `{` and the metadata members, each followed by a comma, as the decoded path writes them.
    private func appendHead(_ row: StoredRow, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        if level == .full {
            let path = "\(table)(PartitionKey='\(Self.keyText(row.partitionKey))',RowKey='\(Self.keyText(row.rowKey))')"
            out += Self.typeMember
            JSONText.appendString(typeName, to: &out)
            out += Self.idMember
            JSONText.appendString("\(base)/\(path)", to: &out)
            out.append(UInt8(ascii: ","))
            out += Self.etagMember
            Self.appendETag(row.timestamp, to: &out)
            out += Self.editLinkMember
            JSONText.appendString(path, to: &out)
            out.append(UInt8(ascii: ","))
        } else if level != .none {
            out += Self.etagMember
            Self.appendETag(row.timestamp, to: &out)
            out.append(UInt8(ascii: ","))
        }
    }

    private static let partitionKeyName = Array(#""PartitionKey":"#.utf8)
    private static let rowKeyName = Array(#""RowKey":"#.utf8)
    private static let timestampName = Array(#""Timestamp":""#.utf8)
    private static let typedTimestampName = Array(#""Timestamp@odata.type":"Edm.DateTime","Timestamp":""#.utf8)
    private static let etagMember = Array(#""odata.etag":"#.utf8)
    private static let typeMember = Array(#""odata.type":"#.utf8)
    private static let idMember = Array(#","odata.id":"#.utf8)
    private static let editLinkMember = Array(#","odata.editLink":"#.utf8)
    private static let typedTimestampMember = Array(#","Timestamp@odata.type":"Edm.DateTime","Timestamp":""#.utf8)
    private static let partitionKeyMember = Array(#""PartitionKey":"#.utf8)
    private static let rowKeyMember = Array(#","RowKey":"#.utf8)
    private static let timestampMember = Array(#","Timestamp":""#.utf8)

    /// The ETag as a JSON string, `"W/\"datetime'…'\""`, written straight into `out`.
    static func appendETag(_ timestamp: EdmDateTime, to out: inout [UInt8]) {
        out += etagStart
        // The time written in place, then each `:` widened to `%3A` from the end (no
        // intermediate array: this ran for every row of every page).
        let start = out.count
        timestamp.appendISO8601(to: &out)
        let colons = out[start...].reduce(0) { $0 + ($1 == UInt8(ascii: ":") ? 1 : 0) }
        if colons > 0 {
            var read = out.count - 1
            out += repeatElement(0, count: colons * 2)
            var write = out.count - 1
            while read >= start {
                if out[read] == UInt8(ascii: ":") {
                    out[write] = UInt8(ascii: "A")
                    out[write - 1] = UInt8(ascii: "3")
                    out[write - 2] = UInt8(ascii: "%")
                    write -= 3
                } else {
                    out[write] = out[read]
                    write -= 1
                }
                read -= 1
            }
        }
        out += etagEnd
    }

    private static let etagStart = Array(#""W/\"datetime'"#.utf8)
    private static let etagEnd = Array(#"'\"""#.utf8)

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
