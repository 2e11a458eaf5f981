import Foundation

/// Evaluates a parsed `$filter` against an entity as the Table service does: a comparison
/// between values of different types, or with a missing property, is false; strings compare
/// by their UTF-8 bytes — the order the emulator lists keys in, so a query resumed with
/// `RowKey gt '…'` goes on exactly where the listing stopped (UTF-16 order, used before, put a
/// key with a character above U+FFFF before one with U+E000–U+FFFF, against the listing); Int32
/// and Int64 are distinct types (an Int64 property needs an `L` literal).
extension FilterExpression {
    public func matches(_ entity: TableEntity, timestamp: EdmDateTime? = nil) -> Bool {
        switch self {
        case .and(let a, let b): return a.matches(entity, timestamp: timestamp) && b.matches(entity, timestamp: timestamp)
        case .or(let a, let b): return a.matches(entity, timestamp: timestamp) || b.matches(entity, timestamp: timestamp)
        case .not(let a): return !a.matches(entity, timestamp: timestamp)
        case .operand(let operand):
            return value(of: operand, in: entity, timestamp: timestamp) == .boolean(true)
        case .comparison(let left, let op, let right):
            guard let l = value(of: left, in: entity, timestamp: timestamp), let r = value(of: right, in: entity, timestamp: timestamp),
                let order = Self.compare(l, r)
            else { return false }
            switch op {
            case .eq: return order == 0
            case .ne: return order != 0
            case .gt: return order > 0
            case .ge: return order >= 0
            case .lt: return order < 0
            case .le: return order <= 0
            }
        }
    }

    private func value(of operand: Operand, in entity: TableEntity, timestamp: EdmDateTime?) -> EdmValue? {
        switch operand {
        case .literal(let v): return v
        // Names by bytes: `case .property("RowKey")` would also take a name that is only
        // canonically equivalent (a Kelvin sign for the K of PartitionKey).
        case .property(let name) where name.isExactly("PartitionKey"): return .string(entity.partitionKey)
        case .property(let name) where name.isExactly("RowKey"): return .string(entity.rowKey)
        case .property(let name) where name.isExactly("Timestamp"): return timestamp.map(EdmValue.dateTime)
        case .property(let name): return entity.properties[name]
        }
    }

    /// -1, 0 or 1 for values of the same type; nil when the types differ.
    public static func compare(_ a: EdmValue, _ b: EdmValue) -> Int? {
        func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x > y ? 1 : 0) }
        switch (a, b) {
        case (.string(let x), .string(let y)): return x.byteOrder(y).signum()
        case (.int32(let x), .int32(let y)): return sign(x, y)
        case (.int64(let x), .int64(let y)): return sign(x, y)
        case (.double(let x), .double(let y)): return x.isNaN || y.isNaN ? (x.isNaN && y.isNaN ? 0 : nil) : sign(x, y)
        case (.boolean(let x), .boolean(let y)): return sign(x ? 1 : 0, y ? 1 : 0)
        case (.dateTime(let x), .dateTime(let y)): return sign(x, y)
        case (.guid(let x), .guid(let y)): return sign(x.uuidString.lowercased(), y.uuidString.lowercased())
        case (.binary(let x), .binary(let y)): return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        default: return nil
        }
    }
}
