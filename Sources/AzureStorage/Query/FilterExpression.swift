/// A parsed OData `$filter` of the Table service: comparisons joined by `and`, `or`, `not`.
package indirect enum FilterExpression: Sendable, Equatable {
    package enum Operand: Sendable, Equatable {
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
    package var comparisonCount: Int {
        switch self {
        case .comparison: 1
        case .operand: 0
        case .and(let a, let b), .or(let a, let b): a.comparisonCount + b.comparisonCount
        case .not(let a): a.comparisonCount
        }
    }
}

/// Why a `$filter` could not be parsed, with the character offset.
package struct FilterSyntaxError: Error, Sendable, CustomStringConvertible {
    package var offset: Int
    package var reason: String
    package var description: String { "invalid $filter at character \(offset): \(reason)" }
}
