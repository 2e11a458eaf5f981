import AzureStorage
import Foundation
import Testing

@testable import SeedRunner

/// How fast a migration writes: batches in flight halve on busy answers and grow back while
/// the service is healthy; `--max-rate` spaces the batches.
@Suite struct MigrationPaceTests {
    static func answer(_ activity: RequestActivity, status: Int) {
        activity.record(
            RequestRecord(
                operation: "Entity Group Transaction", method: "POST", url: "http://h/a/$batch", status: status, errorCode: nil, bytesSent: 0,
                bytesReceived: 0, seconds: 0, attempt: 1, retryReason: nil))
    }

    @Test func busyAnswersHalveAndHealthyOnesGrowBack() async throws {
        let activity = RequestActivity()
        let pace = MigrationPace(ceiling: 16, maxRate: nil, activity: activity)
        #expect(pace.limit == 16)
        var sent = try await pace.admit(100)
        Self.answer(activity, status: 503)
        pace.answered(sent)
        #expect(pace.limit == 8)
        // At most one halving a second: the answers to batches already in flight do not collapse it.
        sent = try await pace.admit(100)
        Self.answer(activity, status: 500)
        pace.answered(sent)
        #expect(pace.limit == 8)
        for _ in 0..<200 {
            sent = try await pace.admit(100)
            Self.answer(activity, status: 202)
            pace.answered(sent)
        }
        #expect(pace.limit == 16, "healthy answers grow it back to the ceiling, never past it")
    }

    @Test func aMaxRateSpacesTheBatches() async throws {
        let pace = MigrationPace(ceiling: 16, maxRate: 1000, activity: RequestActivity())
        let started = ContinuousClock.now
        for _ in 0..<4 { _ = try await pace.admit(100) }
        // The first goes at once; each next one 100 entities / 1,000 a second later.
        #expect(ContinuousClock.now - started >= .milliseconds(290))
    }
}
