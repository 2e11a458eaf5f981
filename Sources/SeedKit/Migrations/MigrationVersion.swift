/// A migration's version: an integer or dotted integers (`3`, `1.2`, `2026.11.1`), ordered
/// numerically component by component, as Flyway orders them. Trailing zero components do
/// not count: `1`, `1.0` and `1.0.0` are one version (two files naming it are refused).
public struct MigrationVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The components, trailing zeros dropped.
    public let components: [UInt64]
    /// The version as the file name wrote it.
    public let text: String

    /// The most components, and the most digits in one: a version is a name, not a number to
    /// compute with, and the ledger's RowKey holds it.
    static let maxComponents = 8
    static let maxDigits = 18

    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.count <= Self.maxComponents else { return nil }
        var components: [UInt64] = []
        for part in parts {
            guard !part.isEmpty, part.utf8.count <= Self.maxDigits, part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = UInt64(part)
            else { return nil }
            components.append(value)
        }
        while components.count > 1, components.last == 0 { components.removeLast() }
        self.components = components
        self.text = text
    }

    /// The canonical text (`1.0` is `1`): the ledger's key for the version.
    public var canonical: String { components.map(String.init).joined(separator: ".") }

    public var description: String { text }

    public static func == (a: MigrationVersion, b: MigrationVersion) -> Bool { a.components == b.components }
    public func hash(into hasher: inout Hasher) { hasher.combine(components) }

    public static func < (a: MigrationVersion, b: MigrationVersion) -> Bool {
        for (x, y) in zip(a.components, b.components) where x != y { return x < y }
        return a.components.count < b.components.count
    }
}
