import Foundation

extension EdmValue {
    /// Appends ``text`` as UTF-8 without building an intermediate String where avoidable.
    public func appendText(to out: inout [UInt8]) {
        switch self {
        case .string(let s): out.append(contentsOf: s.utf8)
        case .int32(let v): out.append(contentsOf: String(v).utf8)
        case .int64(let v): out.append(contentsOf: String(v).utf8)
        case .boolean(let v): out.append(contentsOf: (v ? "true" : "false").utf8)
        case .dateTime(let d): d.appendISO8601(to: &out)
        case .double, .guid, .binary: out.append(contentsOf: text.utf8)
        }
    }
}
