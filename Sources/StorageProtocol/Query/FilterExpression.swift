/// A parsed OData `$filter` of the Table service: comparisons joined by `and`, `or`, `not`.
public indirect enum FilterExpression: Sendable, Equatable {
    public enum Operand: Sendable, Equatable {
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
    public var comparisonCount: Int {
        switch self {
        case .comparison: 1
        case .operand: 0
        case .and(let a, let b), .or(let a, let b): a.comparisonCount + b.comparisonCount
        case .not(let a): a.comparisonCount
        }
    }
}

/// Why a `$filter` could not be parsed, with the character offset.
public struct FilterSyntaxError: Error, Sendable, CustomStringConvertible {
    public var offset: Int
    public var reason: String
    public var description: String { "invalid $filter at character \(offset): \(reason)" }
}

extension FilterExpression {
    /// Each comparison of a property with a literal, as written (`Amount gt 100`).
    public var literalComparisons: [(property: String, literal: EdmValue)] {
        switch self {
        case .comparison(.property(let name), _, .literal(let value)), .comparison(.literal(let value), _, .property(let name)): [(name, value)]
        case .comparison, .operand: []
        case .and(let a, let b), .or(let a, let b): a.literalComparisons + b.literalComparisons
        case .not(let a): a.literalComparisons
        }
    }

    /// Each comparison of a property with another property (`PartitionKey eq orders`, where a
    /// string was meant and its quotes forgotten).
    public var propertyComparisons: [(String, String)] {
        switch self {
        case .comparison(.property(let a), _, .property(let b)): [(a, b)]
        case .comparison, .operand: []
        case .and(let a, let b), .or(let a, let b): a.propertyComparisons + b.propertyComparisons
        case .not(let a): a.propertyComparisons
        }
    }
}
