import AzureStorage

/// A field compiled for fast evaluation. `key` is the index of the field's component in
/// the kind's key space when the key index decides its value, nil when the entity's own
/// random stream draws it.
enum FieldOp: Sendable {
    case value(EdmValue)
    case pick([EdmValue], key: Int?)
    /// Running totals of the weights: a draw below the total finds its value by them.
    case weightedPick([EdmValue], cumulative: [UInt64])
    /// `exact:` weights: the generation index's place in its run of `cumulative.last` entities,
    /// through that run's permutation, falls in one value's share.
    case dealtPick([EdmValue], cumulative: [UInt64], seed: UInt64)
    case date(first: Int64, step: Int64, count: UInt64, key: Int?)
    case int(min: Int64, count: UInt128, type: EdmType, key: Int?)
    /// `scale`: 10^round, when the value is rounded to `round` decimal places.
    case double(min: Double, width: Double, scale: Double?)
    /// A `unique:` field: the entity's generation index through the permutation picks its
    /// value from the domain.
    case unique(UniqueDomain, IndexPermutation)
    case sequence(start: Int64, step: Int64, type: EdmType)
    /// An entity of kind `target`; with a key component, the component picks a group of
    /// entities sharing the key's values, and the stream picks within the group.
    case ref(target: KindEngine, key: Int?, groups: [[Int]])
    case from(refSlot: Int, property: Int)
    /// The referenced entity's date plus `k × step`, `k` uniform below `steps`.
    case dateAfter(refSlot: Int, property: Int, step: Int64, steps: UInt64)
    case template(Template, sources: [VariableSource])
    /// A drawn name, e-mail address or phone number (``Vocabulary``).
    case fakeName
    case fakeEmail(domain: String)
    case fakePhone
    /// An address made of another slot's text.
    case emailOf(slot: Int, domain: String)
    case blobURL(prefix: String, name: Template, sources: [VariableSource], files: Set<ExactString>, container: String)
}

/// Where a template variable's text comes from.
enum VariableSource: Sendable {
    case slot(name: String, index: Int)
    case refProperty(ref: String, property: String, slot: Int, propertyIndex: Int)
}

/// Names a ref's target property the way ``KindEngine/property(_:of:)`` resolves it.
enum PropertyIndex {
    static let partitionKey = -1
    static let rowKey = -2
}

/// The values a `unique:` field draws from without replacement.
enum UniqueDomain: Sendable {
    case values([EdmValue])
    case ints(min: Int64, type: EdmType)
    /// Dates on a grid: `first + k × step`.
    case dates(first: Int64, step: Int64)
    /// ``Vocabulary``'s names, addresses of them, phone numbers.
    case names
    case emails(domain: String)
    case phones

    func value(_ k: UInt64) -> EdmValue {
        switch self {
        case .values(let list): list[Int(k)]
        case .ints(let min, let type): intValue(Int128(min) + Int128(k), type)
        case .dates(let first, let step): .dateTime(EdmDateTime(ticks: first + Int64(k) * step))
        case .names: .string(Vocabulary.name(Int(k)))
        case .emails(let domain): .string(Vocabulary.email(of: Vocabulary.name(Int(k)), domain: domain))
        case .phones: .string(Vocabulary.phone(Int(k)))
        }
    }
}
