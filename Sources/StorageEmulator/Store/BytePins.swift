import Synchronization

/// Byte objects a reader still needs: deleting a pinned one waits until its last reader lets
/// go (a page blob's reader opens its extents' objects as it reaches them, so a Put Page that
/// frees one meanwhile must not take it away). In-process only: after a crash the start-up sweep
/// removes whatever no row refers to.
final class BytePins: Sendable {
    private struct State {
        var counts: [String: Int] = [:]
        var deferred: Set<String> = []
    }
    private let state = Mutex(State())

    func pin(_ ids: Set<String>) {
        state.withLock { s in for id in ids { s.counts[id, default: 0] += 1 } }
    }

    /// Lets go of `ids`; returns those now free to delete (their deletion was deferred).
    func unpin(_ ids: Set<String>) -> [String] {
        state.withLock { s in
            var free: [String] = []
            for id in ids {
                let left = (s.counts[id] ?? 1) - 1
                if left > 0 {
                    s.counts[id] = left
                } else {
                    s.counts[id] = nil
                    if s.deferred.remove(id) != nil { free.append(id) }
                }
            }
            return free
        }
    }

    /// The ids that may be deleted now; pinned ones are deleted when unpinned.
    func deletable(_ ids: [String]) -> [String] {
        state.withLock { s in
            ids.filter { id in
                guard s.counts[id] != nil else { return true }
                s.deferred.insert(id)
                return false
            }
        }
    }
}
