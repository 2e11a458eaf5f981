import AzureStorage

/// The app's code under test: the speakers' names, as the SpeakEasy app lists them.
public struct SpeakerDirectory: Sendable {
    let tables: TableClient

    public init(tables: TableClient) { self.tables = tables }

    public func names() async throws -> [String] {
        var names: [String] = []
        for try await page in tables.query("events", filter: .partition("speakers")) {
            for entity in page { if case .string(let name)? = entity.entity["Name"] { names.append(name) } }
        }
        return names.sorted()
    }
}
