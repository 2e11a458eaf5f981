import AzureStorage
import Foundation
import Synchronization
import Testing

/// Throttled partitions slow down; other partitions do not.
@Suite struct PartitionThrottleTests {
    func batchResponse() -> TransportResponse {
        let boundary = "batchresponse_1"
        let body =
            "--\(boundary)\r\nContent-Type: multipart/mixed; boundary=changesetresponse_1\r\n\r\n--changesetresponse_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 204 No Content\r\nETag: W/\"1\"\r\n\r\n--changesetresponse_1--\r\n--\(boundary)--\r\n"
        return TransportResponse(
            status: 202, headers: HeaderFields([("Content-Type", "multipart/mixed; boundary=\(boundary)")]), body: Data(body.utf8))
    }

    @Test func aThrottledPartitionIsSpacedOutAndOthersAreNot() async throws {
        let sleeps = SleepRecorder()
        let clock = TestClock()
        let busy = TransportResponse(status: 503, headers: HeaderFields([("x-ms-error-code", "ServerBusy")]))
        let transport = FakeTransport(responses: [busy, batchResponse(), batchResponse(), batchResponse(), batchResponse()])
        var configuration = testConfiguration(sleeps)
        configuration.now = { clock.now }
        let client = TableClient(account: .development(), transport: transport, configuration: configuration)
        let entity = { (pk: String) in TableBatchOperation.upsertReplace(TableEntity(partitionKey: pk, rowKey: "r")) }
        try await client.submit([entity("hot")], to: "events")
        // The 503 set a 200 ms spacing on events/hot: the retry waited its own backoff (100 ms)
        // and the partition's spacing (200 ms). A success right after does not undo it.
        #expect(sleeps.recorded == [.milliseconds(100), .milliseconds(200)])
        #expect(configuration.throttle.delay(of: "events/hot") == .milliseconds(200))
        // Another partition goes at once.
        try await client.submit([entity("cold")], to: "events")
        #expect(sleeps.recorded.count == 2)
        // The next request to the hot one takes the next slot, 200 ms after the retry's.
        try await client.submit([entity("hot")], to: "events")
        #expect(sleeps.recorded.last == .milliseconds(400))
        // Once a spacing's time has passed, a success halves it.
        clock.advance(1)
        try await client.submit([entity("hot")], to: "events")
        #expect(sleeps.recorded.count == 3)
        #expect(configuration.throttle.delay(of: "events/hot") == .milliseconds(100))
    }
}
