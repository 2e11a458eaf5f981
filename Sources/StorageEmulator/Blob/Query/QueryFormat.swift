import Foundation

/// How a query reads its blob or writes its answer (`InputSerialization`/`OutputSerialization`).
/// Arrow is an output format only (as on Azure); Parquet input is Azure's too, and the emulator
/// refuses it when the request is read, never answers it with something else.
enum QueryFormat: Equatable, Sendable {
    case delimited(DelimitedText)
    case json(recordSeparator: [UInt8])
    /// An Arrow IPC stream with these columns (`ArrowConfiguration`).
    case arrow([ArrowField])

    /// Azure's default: CSV, `,` `"` and `\n`, no escape, no headers.
    static let `default` = QueryFormat.delimited(DelimitedText())

    /// The record separator an answer ends its records with.
    var recordSeparator: [UInt8] {
        switch self {
        case .delimited(let text): text.recordSeparator
        case .json(let separator): separator
        case .arrow: []
        }
    }
}

/// A Query Blob Contents request body, read.
struct QueryRequest: Equatable, Sendable {
    var expression: QueryExpression
    var input: QueryFormat
    var output: QueryFormat

    /// Why a request body was refused: which element, and why.
    struct Invalid: Error, Equatable {
        var element: String
        var reason: String
    }

    /// Reads `<QueryRequest>`; whitespace inside the separators is kept (it is what they are).
    static func parse(_ body: Data) throws(Invalid) -> QueryRequest {
        guard body.count <= 64 * 1024 else { throw Invalid(element: "QueryRequest", reason: "the body is larger than 64 KiB") }
        guard let root = XMLTree.parse(body, keepingWhitespace: true), root.name == "QueryRequest" else {
            throw Invalid(element: "QueryRequest", reason: "the body is not a QueryRequest XML document")
        }
        if let type = root["QueryType"], type.text.trimmingCharacters(in: .whitespacesAndNewlines) != "SQL" {
            throw Invalid(element: "QueryType", reason: "it is '\(type.text)'; SQL is the one query type")
        }
        guard let text = root["Expression"]?.text else { throw Invalid(element: "Expression", reason: "it is missing") }
        let expression: QueryExpression
        do { expression = try QueryExpression(parsing: text) } catch { throw Invalid(element: "Expression", reason: error.reason) }
        let input = try root["InputSerialization"].map { (node) throws(Invalid) in try format(node, output: false) } ?? .default
        let output = try root["OutputSerialization"].map { (node) throws(Invalid) in try format(node, output: true) } ?? input
        return QueryRequest(expression: expression, input: input, output: output)
    }

    private static func format(_ node: XMLTree, output: Bool) throws(Invalid) -> QueryFormat {
        let side = output ? "OutputSerialization" : "InputSerialization"
        guard let format = node["Format"], let type = format["Type"]?.text.trimmingCharacters(in: .whitespacesAndNewlines) else {
            throw Invalid(element: side, reason: "it has no Format/Type")
        }
        switch type.lowercased() {
        case "delimited":
            var text = DelimitedText()
            if let c = format["DelimitedTextConfiguration"] {
                if let v = c["ColumnSeparator"]?.text { text.columnSeparator = try character(v, "ColumnSeparator", empty: false) }
                if let v = c["FieldQuote"]?.text { text.fieldQuote = try character(v, "FieldQuote", empty: true) }
                if let v = c["RecordSeparator"]?.text { text.recordSeparator = try character(v, "RecordSeparator", empty: false, pair: true) }
                if let v = c["EscapeChar"]?.text { text.escapeChar = try character(v, "EscapeChar", empty: true) }
                if let v = c["HasHeaders"]?.text {
                    switch v.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() {
                    case "true": text.hasHeaders = true
                    case "false": text.hasHeaders = false
                    default: throw Invalid(element: "HasHeaders", reason: "it is '\(v)', not true or false")
                    }
                }
            }
            return .delimited(text)
        case "json":
            var separator = Array("\n".utf8)
            if let v = format["JsonTextConfiguration"]?["RecordSeparator"]?.text {
                separator = try character(v, "RecordSeparator", empty: false, pair: true)
            }
            return .json(recordSeparator: separator)
        case "arrow":
            guard output else { throw Invalid(element: side, reason: "Arrow is an output format; a blob is read as CSV or JSON") }
            return .arrow(try arrowSchema(format["ArrowConfiguration"]))
        case "parquet":
            throw Invalid(element: side, reason: "Parquet input is not implemented by the emulator (CSV and JSON are)")
        default:
            throw Invalid(element: "Type", reason: "it is '\(type)'; the formats are delimited and json")
        }
    }

    /// The types `ArrowConfiguration` may name, as the SDKs spell them.
    private static let arrowTypes: [String: ArrowType] = [
        "int64": .int64, "bool": .bool, "timestamp[ms]": .timestampMilliseconds, "string": .utf8, "double": .double,
    ]

    /// `<ArrowConfiguration><Schema><Field><Type/><Name/><Precision/><Scale/></Field>…`: at
    /// least one field, at most 49 (the columns a query may name); a decimal's precision 1–38
    /// and scale 0–precision.
    private static func arrowSchema(_ configuration: XMLTree?) throws(Invalid) -> [ArrowField] {
        guard let schema = configuration?["Schema"] else { throw Invalid(element: "ArrowConfiguration", reason: "it has no Schema") }
        let nodes = schema.children.filter { $0.name == "Field" }
        guard !nodes.isEmpty else { throw Invalid(element: "Schema", reason: "it has no Field") }
        guard nodes.count <= QueryExpression.maxColumns else {
            throw Invalid(element: "Schema", reason: "it has \(nodes.count) fields; at most \(QueryExpression.maxColumns)")
        }
        var fields: [ArrowField] = []
        for (n, node) in nodes.enumerated() {
            let typeName = node["Type"]?.text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() ?? ""
            let name = node["Name"]?.text ?? ""
            guard name.utf8.count <= 1024 else { throw Invalid(element: "Name", reason: "field \(n + 1)'s name is longer than 1,024 bytes") }
            if typeName == "decimal" {
                func number(_ element: String) throws(Invalid) -> Int32 {
                    guard let text = node[element]?.text.trimmingCharacters(in: .whitespacesAndNewlines), let value = Int32(text) else {
                        throw Invalid(element: element, reason: "field \(n + 1) is a decimal and needs an integer \(element)")
                    }
                    return value
                }
                let precision = try number("Precision")
                let scale = try number("Scale")
                guard (1...38).contains(precision), (0...precision).contains(scale) else {
                    throw Invalid(
                        element: "Precision", reason: "field \(n + 1) is decimal(\(precision), \(scale)); precision is 1–38, scale 0–precision")
                }
                fields.append(ArrowField(name: name, type: .decimal128(precision: precision, scale: scale)))
            } else if let type = arrowTypes[typeName] {
                fields.append(ArrowField(name: name, type: type))
            } else {
                throw Invalid(
                    element: "Type",
                    reason: "field \(n + 1)'s type is '\(typeName)'; the types are int64, bool, timestamp[ms], string, double and decimal")
            }
        }
        return fields
    }

    /// A separator is one character (`\r\n` also for a record separator); quote and escape may
    /// be empty (none).
    private static func character(_ value: String, _ element: String, empty: Bool, pair: Bool = false) throws(Invalid) -> [UInt8] {
        if value.isEmpty {
            guard empty else { throw Invalid(element: element, reason: "it is empty") }
            return []
        }
        guard value.unicodeScalars.count == 1 || (pair && value == "\r\n") else {
            throw Invalid(element: element, reason: "it is '\(value)', more than one character")
        }
        return Array(value.utf8)
    }
}
