import AzureStorage
import Foundation
import Synchronization

/// A scripted transport: answers requests in order and records them.
final class FakeTransport: HTTPTransport {
    private let state: Mutex<(responses: [Result<TransportResponse, Error>], requests: [TransportRequest])>

    init(_ responses: [Result<TransportResponse, Error>]) { state = Mutex((responses, [])) }

    convenience init(responses: [TransportResponse]) { self.init(responses.map { .success($0) }) }

    var requests: [TransportRequest] { state.withLock { $0.requests } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let next: Result<TransportResponse, Error> = state.withLock { s in
            s.requests.append(request)
            return s.responses.isEmpty ? .success(TransportResponse(status: 599)) : s.responses.removeFirst()
        }
        return try next.get()
    }
}

/// Records the waits a retry policy asks for, without waiting.
final class SleepRecorder: Sendable {
    private let waits = Mutex<[Duration]>([])
    var recorded: [Duration] { waits.withLock { $0 } }
    var sleeper: Sleeper { { [self] d in waits.withLock { $0.append(d) } } }
}

func json(_ status: Int, _ body: String, _ headers: [(String, String)] = []) -> TransportResponse {
    TransportResponse(status: status, headers: HeaderFields(headers + [("Content-Type", "application/json")]), body: Data(body.utf8))
}

func testConfiguration(_ sleeps: SleepRecorder = SleepRecorder(), retries: Int = 3) -> ClientConfiguration {
    ClientConfiguration(
        retry: RetryPolicy(maxRetries: retries, initialDelay: .milliseconds(100), maxDelay: .seconds(5), jitter: 0),
        sleep: sleeps.sleeper, now: { Date(timeIntervalSince1970: 1_795_253_594) }, jitter: { 0.5 })
}
