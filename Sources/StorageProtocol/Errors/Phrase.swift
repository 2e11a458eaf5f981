/// A message for a person whose remedies name ``Setting``s, spelled only when it is shown:
/// `"choose another \(Setting.outputFolder)"` reads "choose another --out" from azseed and
/// "choose another output folder" from a library. Written as a string literal with
/// interpolations; anything else interpolated is text.
public struct Phrase: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringInterpolation {
    enum Part: Sendable, Equatable {
        case text(String)
        case setting(Setting)
    }

    private(set) var parts: [Part]

    /// A phrase that is all text (a fact from elsewhere, e.g. a far end's message).
    public init(verbatim text: String) { parts = [.text(text)] }

    public init(stringLiteral value: String) { parts = [.text(value)] }

    public init(stringInterpolation: StringInterpolation) { parts = stringInterpolation.parts }

    /// The phrase with each setting spelled by `names`.
    public func rendered(_ names: SettingNames) -> String {
        parts.map {
            switch $0 {
            case .text(let text): text
            case .setting(let setting): names(setting)
            }
        }.joined()
    }

    /// The settings the phrase names, in order.
    public var settings: [Setting] {
        parts.compactMap {
            if case .setting(let setting) = $0 { return setting }
            return nil
        }
    }

    /// The phrase as a library shows it (``SettingNames/library``).
    public var description: String { rendered(.library) }

    public static func + (a: Phrase, b: Phrase) -> Phrase {
        var joined = a
        joined.parts += b.parts
        return joined
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var parts: [Part] = []

        public init(literalCapacity: Int, interpolationCount: Int) { parts.reserveCapacity(interpolationCount * 2 + 1) }

        public mutating func appendLiteral(_ literal: String) { parts.append(.text(literal)) }

        /// A setting, spelled when the phrase is shown.
        public mutating func appendInterpolation(_ setting: Setting) { parts.append(.setting(setting)) }

        /// Another phrase, its settings kept.
        public mutating func appendInterpolation(_ phrase: Phrase) { parts += phrase.parts }

        /// An error phrased for a person, its settings kept.
        public mutating func appendInterpolation(_ error: some PersonFacingError) { parts += error.phrase.parts }

        /// Anything else, as text.
        public mutating func appendInterpolation<T>(_ value: T) { parts.append(.text(String(describing: value))) }
    }
}
