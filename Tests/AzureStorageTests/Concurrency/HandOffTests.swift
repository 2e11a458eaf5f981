import Foundation
import StorageProtocol
import Synchronization
import Testing

/// `HandOff`: values arrive in order and whole, the producer waits while the consumer is
/// `capacity` behind, and an error on either side ends both without a hang.
struct HandOffTests {
    struct Broken: Error {}

    @Test func everyValueArrivesInOrder() throws {
        var seen: [Int] = []
        try HandOff<Int>.run(capacity: 3) { put in
            for i in 0..<2_000 { try put(i) }
        } consume: {
            seen.append($0)
        }
        #expect(seen == Array(0..<2_000))
    }

    @Test func theProducerWaitsWhileTheConsumerIsBehind() throws {
        let produced = Atomic(0)
        var mostAhead = 0
        var taken = 0
        try HandOff<Int>.run(capacity: 2) { put in
            for i in 0..<200 {
                try put(i)
                produced.add(1, ordering: .sequentiallyConsistent)
            }
        } consume: { _ in
            taken += 1
            // A slow consumer: the producer may be at most the queue's two plus the one in
            // its hand ahead of what was taken.
            Thread.sleep(forTimeInterval: 0.0005)
            mostAhead = max(mostAhead, produced.load(ordering: .sequentiallyConsistent) - taken)
        }
        #expect(taken == 200)
        #expect(mostAhead <= 3)
    }

    @Test func aProducerErrorReachesTheCallerAfterWhatCameBefore() {
        var seen: [Int] = []
        #expect(throws: Broken.self) {
            try HandOff<Int>.run(capacity: 4) { put in
                for i in 0..<5 { try put(i) }
                throw Broken()
            } consume: {
                seen.append($0)
            }
        }
        #expect(seen == [0, 1, 2, 3, 4])
    }

    @Test func aConsumerErrorStopsTheProducer() {
        let produced = Atomic(0)
        #expect(throws: Broken.self) {
            try HandOff<Int>.run(capacity: 2) { put in
                // Would never end on its own: the consumer's error must stop it.
                while true {
                    try put(1)
                    produced.add(1, ordering: .sequentiallyConsistent)
                }
            } consume: { _ in
                throw Broken()
            }
        }
        // run returned only after the producer's thread ended: nothing is put any more.
        let after = produced.load(ordering: .sequentiallyConsistent)
        Thread.sleep(forTimeInterval: 0.05)
        #expect(produced.load(ordering: .sequentiallyConsistent) == after)
        #expect(after <= 3)
    }
}
