import AzureStorage

/// A parsed OData `$filter` of the Table service: comparisons joined by `and`, `or`, `not`.
indirect enum FilterExpression: Sendable, Equatable {
    enum Operand: Sendable, Equatable {
        case property(String)
        case literal(EdmValue)
    }

    case comparison(Operand, TableFilter.Operator, Operand)
    /// A bare operand used as a condition: a Boolean property or `true`/`false`.
    case operand(Operand)
    case and(FilterExpression, FilterExpression)
    case or(FilterExpression, FilterExpression)
    case not(FilterExpression)

    /// How many comparisons the filter holds (the service allows 15).
    var comparisonCount: Int {
        switch self {
        case .comparison: 1
        case .operand: 0
        case .and(let a, let b), .or(let a, let b): a.comparisonCount + b.comparisonCount
        case .not(let a): a.comparisonCount
        }
    }
}

/// Why a `$filter` could not be parsed, with the character offset.
struct FilterSyntaxError: Error, Sendable, CustomStringConvertible {
    var offset: Int
    var reason: String
    var description: String { "invalid $filter at character \(offset): \(reason)" }
}
