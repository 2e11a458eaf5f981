import AzureStorage
import Foundation
import Logging
import Synchronization
import Testing

/// Logging goes through an injected swift-log `Logger` (issue 30, item 5): a program's own
/// handler hears every attempt with its fields, and `--verbose`'s line format comes from the
/// handler the CLI injects.
@Suite struct InjectedLoggerTests {
    final class Capture: Sendable {
        let events = Mutex<[(Logger.Level, Logger.Metadata)]>([])
    }

    struct CapturingHandler: LogHandler {
        let capture: Capture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { capture.events.withLock { $0.append((event.level, event.metadata ?? [:])) } }
    }

    @Test func aProgramsOwnHandlerHearsEveryAttemptWithItsFields() async throws {
        let capture = Capture()
        var configuration = ClientConfiguration(retry: .noRetry)
        configuration.logger = Logger(label: "mine") { _ in CapturingHandler(capture: capture) }
        let account = StorageAccount(
            name: "devstoreaccount1", credential: .sharedKey(AccountKey(base64: StorageAccount.developmentAccountKey)!),
            blobEndpoint: URL(string: "http://127.0.0.1:1/devstoreaccount1")!, tableEndpoint: URL(string: "http://127.0.0.1:2/devstoreaccount1")!)
        let transport = ClosureTransport { _ in TransportResponse(status: 201, headers: HeaderFields([("ETag", "\"1\"")])) }
        try await BlobClient(account: account, transport: transport, configuration: configuration).createContainer("fixtures")
        let events = capture.events.withLock { $0 }
        #expect(events.count == 1)
        let (level, metadata) = try #require(events.first)
        #expect(level == .info && metadata["operation"] == "Create Container" && metadata["method"] == "PUT")
        #expect(metadata["status"]?.description == "201" && metadata["attempt"]?.description == "1")
    }
}
