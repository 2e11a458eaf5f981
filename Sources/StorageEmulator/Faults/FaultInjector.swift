import Foundation

/// A failure the emulator may inject, as the real service can fail.
enum Fault: Sendable, Equatable {
    /// 503 ServerBusy before anything is applied.
    case serverBusy
    /// The request is applied, then answered 500 OperationTimedOut: the client cannot tell.
    case timeoutAfterApplying
    /// The request is applied, then the connection is closed without an answer.
    case dropAfterApplying
}

/// Chooses which requests fail: each request independently with probability `rate`, the
/// kind uniformly among the three, from a seeded SplitMix64 stream so a run can be replayed.
final class FaultInjector: @unchecked Sendable {
    let rate: Double
    private var state: UInt64
    private let lock = NSLock()

    init(rate: Double, seed: UInt64) {
        self.rate = rate
        self.state = seed
    }

    private func nextRandom() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The fault for the next request, or nil.
    func next() -> Fault? {
        guard rate > 0 else { return nil }
        return lock.withLock {
            let draw = Double(nextRandom() >> 11) / Double(1 << 53)
            guard draw < rate else { return nil }
            switch nextRandom() % 3 {
            case 0: return .serverBusy
            case 1: return .timeoutAfterApplying
            default: return .dropAfterApplying
            }
        }
    }
}
