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
    /// keys are doubled (`'` → `''`). Read as bytes: every operation of a `$batch` names its
    /// entity by a path, and String and Character work on it was a tenth of the emulator's
    /// time in a migration. Keys are split at ASCII quotes and commas, byte for byte, as Azure
    /// reads them.
    static func parse(_ encodedPath: String, account: String) throws(ServiceError) -> TableResource {
        let path = Array(encodedPath.utf8)
        let prefix = Array("/\(account)/".utf8)
        guard path.starts(with: prefix) else {
            throw ServiceError(400, .invalidUri, "The request URI does not start with the account name '\(account)'.")
        }
        guard let bytes = percentDecoded(path[prefix.count...]), let decoded = String(validating: bytes, as: UTF8.self) else {
            throw ServiceError(400, .invalidUri, "The request URI is not valid percent-encoding.")
        }
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        if bytes.elementsEqual("$batch".utf8) { return .batch }
        let name: Range<Int>
        let arguments: Range<Int>?
        if let open = bytes.firstIndex(of: UInt8(ascii: "(")) {
            guard bytes.last == UInt8(ascii: ")") else { throw invalid(decoded) }
            name = 0..<open
            arguments = open + 1..<bytes.count - 1
        } else {
            name = 0..<bytes.count
            arguments = nil
        }
        if let slash = bytes[name].firstIndex(of: UInt8(ascii: "/")) {
            guard slash > 0 else { throw invalid(decoded) }
            return .nested(text(0..<slash), rest: text(slash + 1..<bytes.count))
        }
        guard !name.isEmpty else { throw invalid(decoded) }
        if bytes[name].elementsEqual("Tables".utf8) {
            guard let arguments, !arguments.isEmpty else { return .tables }
            guard arguments.count >= 2, bytes[arguments.lowerBound] == quote, bytes[arguments.upperBound - 1] == quote else {
                throw invalid(decoded)
            }
            return .table(text(arguments.lowerBound + 1..<arguments.upperBound - 1).replacingOccurrences(of: "''", with: "'"))
        }
        guard let arguments, !arguments.isEmpty else { return .entities(text(name)) }
        var i = arguments.lowerBound
        guard literal("PartitionKey='", bytes, at: &i, end: arguments.upperBound),
            let pk = QuotedLiteral.read(bytes, at: &i, end: arguments.upperBound),
            literal(",RowKey='", bytes, at: &i, end: arguments.upperBound), let rk = QuotedLiteral.read(bytes, at: &i, end: arguments.upperBound),
            i == arguments.upperBound
        else { throw invalid(decoded) }
        return .entity(text(name), partitionKey: pk, rowKey: rk)
    }

    private static let quote = UInt8(ascii: "'")

    /// `%XX` decoded; nil when a `%` is not followed by two hexadecimal digits.
    static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        guard bytes.contains(UInt8(ascii: "%")) else { return Array(bytes) }
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, let high = hex(bytes[i + 1]), let low = hex(bytes[i + 2]) else { return nil }
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    private static func literal(_ expected: StaticString, _ bytes: [UInt8], at i: inout Int, end: Int) -> Bool {
        let count = expected.utf8CodeUnitCount
        guard end - i >= count else { return false }
        let matches = expected.withUTF8Buffer { expected in (0..<count).allSatisfy { bytes[i + $0] == expected[$0] } }
        if matches { i += count }
        return matches
    }

    private static func invalid(_ path: String) -> ServiceError {
        ServiceError(400, .invalidUri, "The requested URI does not represent any resource on the server: '\(path)'.")
    }
}
