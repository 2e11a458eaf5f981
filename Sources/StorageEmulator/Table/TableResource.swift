import Foundation
import StorageProtocol

/// What a Table service path addresses (docs/PROTOCOL.md §4).
enum TableResource: Equatable {
    /// `/Tables` or `/Tables()`.
    case tables
    /// `/Tables('name')`.
    case table(String)
    /// `/$batch`.
    case batch
    /// `/name` or `/name()`.
    case entities(String)
    /// `/name(PartitionKey='…',RowKey='…')`.
    case entity(String, partitionKey: String, rowKey: String)
    /// `/name/rest`: a path below a table (`/t/Tables`, `/t/$batch` — a client given an account
    /// URL that ends with a table name). Azure answers these as addressing the table `name`.
    case nested(String, rest: String)

    /// Parses the path after the account segment, percent-decoding it first; quotes inside
    /// keys are doubled (`'` → `''`).
    static func parse(_ encodedPath: String, account: String) throws(ServiceError) -> TableResource {
        var path = Substring(encodedPath)
        let prefix = "/" + account
        guard path.hasPrefix(prefix + "/") else {
            throw ServiceError(400, .invalidUri, "The request URI does not start with the account name '\(account)'.")
        }
        path = path.dropFirst(prefix.count + 1)
        // Most paths hold no escape: Foundation's decoding was a fortieth of a seeding run.
        guard let decoded = path.utf8.contains(UInt8(ascii: "%")) ? String(path).removingPercentEncoding : String(path) else {
            throw ServiceError(400, .invalidUri, "The request URI is not valid percent-encoding.")
        }
        if decoded == "$batch" { return .batch }
        let name: String
        let arguments: String?
        if let open = decoded.firstIndex(of: "(") {
            guard decoded.hasSuffix(")") else { throw invalid(decoded) }
            name = String(decoded[..<open])
            arguments = String(decoded[decoded.index(after: open)..<decoded.index(before: decoded.endIndex)])
        } else {
            name = decoded
            arguments = nil
        }
        if let slash = name.firstIndex(of: "/") {
            let table = String(name[..<slash])
            guard !table.isEmpty else { throw invalid(decoded) }
            return .nested(table, rest: String(decoded[decoded.index(after: slash)...]))
        }
        guard !name.isEmpty else { throw invalid(decoded) }
        if name == "Tables" {
            guard let arguments, !arguments.isEmpty else { return .tables }
            guard arguments.hasPrefix("'"), arguments.hasSuffix("'"), arguments.count >= 2 else { throw invalid(decoded) }
            return .table(String(arguments.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'"))
        }
        guard let arguments, !arguments.isEmpty else { return .entities(name) }
        var scanner = KeyScanner(text: Array(arguments))
        guard scanner.literal("PartitionKey='"), let pk = scanner.quoted(), scanner.literal(",RowKey='"),
            let rk = scanner.quoted(), scanner.atEnd
        else { throw invalid(decoded) }
        return .entity(name, partitionKey: pk, rowKey: rk)
    }

    private static func invalid(_ path: String) -> ServiceError {
        ServiceError(400, .invalidUri, "The requested URI does not represent any resource on the server: '\(path)'.")
    }

    /// Reads `PartitionKey='…',RowKey='…'` where a quote inside a key is doubled.
    private struct KeyScanner {
        let text: [Character]
        var i = 0

        var atEnd: Bool { i == text.count }

        mutating func literal(_ s: String) -> Bool {
            let chars = Array(s)
            guard i + chars.count <= text.count, Array(text[i..<i + chars.count]) == chars else { return false }
            i += chars.count
            return true
        }

        /// The key up to its closing quote (already past the opening one).
        mutating func quoted() -> String? { QuotedLiteral.read(text, at: &i) }
    }
}
