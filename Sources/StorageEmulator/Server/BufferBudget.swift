import Synchronization

/// The bytes of request bodies held in memory across every connection at once (table bodies,
/// `$batch`, ACLs and other XML; blob uploads stream to disk instead). Past ``limit`` a request
/// is answered 503 ServerBusy and its connection closed, so many concurrent bodies cannot
/// exhaust memory (docs/SECURITY.md, "anonymous client").
final class BufferBudget: Sendable {
    let limit: Int
    private let used = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Takes `bytes` from the budget; false (nothing taken) when that would pass the limit.
    func take(_ bytes: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current + bytes <= limit else { return false }
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    func give(_ bytes: Int) { used.subtract(bytes, ordering: .relaxed) }
}
