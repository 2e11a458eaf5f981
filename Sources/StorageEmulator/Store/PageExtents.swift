/// A written range of a page blob: bytes `start..<end` of the blob are bytes
/// `dataOffset..<dataOffset + (end - start)` of the byte object `data`. What no extent covers
/// reads as zeros, so a page blob takes the space of what was written, not of its size. An
/// extent with no object (`data` empty) is a cleared range: zeros, but remembered, because a
/// page range diff reports what was cleared since a snapshot as Azure does.
struct PageExtent: Sendable, Equatable {
    var start: Int
    var end: Int
    var data: String
    var dataOffset: Int

    var length: Int { end - start }
    var isCleared: Bool { data.isEmpty }

    /// The part of this extent inside `lower..<upper`, nil when none is.
    func clipped(to lower: Int, _ upper: Int) -> PageExtent? {
        let s = max(start, lower)
        let e = min(end, upper)
        guard s < e else { return nil }
        return PageExtent(start: s, end: e, data: data, dataOffset: dataOffset + (s - start))
    }
}

/// The range algebra of page blobs, kept apart from storage so it can be tested on its own:
/// extents are sorted by `start` and never overlap.
enum PageExtents {
    /// Page blobs are written in 512-byte pages.
    static let pageSize = 512
    /// The largest page blob Azure allows: 8 TiB.
    static let maxSize = 8 << 40

    /// `extents` with `lower..<upper` removed (Clear Pages, or the room a write takes).
    static func removing(_ lower: Int, _ upper: Int, from extents: [PageExtent]) -> [PageExtent] {
        var out: [PageExtent] = []
        for extent in extents {
            guard extent.end > lower && extent.start < upper else {
                out.append(extent)
                continue
            }
            if let left = extent.clipped(to: extent.start, lower) { out.append(left) }
            if let right = extent.clipped(to: upper, extent.end) { out.append(right) }
        }
        return out
    }

    /// `extents` with `written` in place of whatever it covers (Put Page).
    static func writing(_ written: PageExtent, into extents: [PageExtent]) -> [PageExtent] {
        var out = removing(written.start, written.end, from: extents)
        let index = out.firstIndex { $0.start > written.start } ?? out.endIndex
        out.insert(written, at: index)
        return out
    }

    /// The ranges that hold data, adjacent extents joined (Get Page Ranges), inside
    /// `lower..<upper`; each is `(first byte, last byte)`.
    static func ranges(_ extents: [PageExtent], from lower: Int = 0, to upper: Int = .max) -> [(start: Int, end: Int)] {
        var out: [(start: Int, end: Int)] = []
        for extent in extents where !extent.isCleared {
            guard let part = extent.clipped(to: lower, upper) else { continue }
            if let last = out.last, last.end + 1 == part.start {
                out[out.count - 1].end = part.end - 1
            } else {
                out.append((part.start, part.end - 1))
            }
        }
        return out
    }

    /// The byte objects `before` refers to that `after` no longer does (to delete once the
    /// change is committed).
    static func freed(before: [PageExtent], after: [PageExtent]) -> [String] {
        let kept = Set(after.map(\.data))
        return Array(Set(before.map(\.data)).subtracting(kept)).filter { !$0.isEmpty }
    }

    /// A page range diff (Get Page Ranges with `prevsnapshot`): where `current` differs from
    /// `previous`, both named by the object each extent came from. Pages written since are
    /// ranges; pages cleared since (a cleared extent where the previous had bytes, or a clear
    /// over what was never written) are cleared ranges. Adjacent ranges of one kind are joined.
    static func diff(current: [PageExtent], previous: [PageExtent]) -> (ranges: [(start: Int, end: Int)], cleared: [(start: Int, end: Int)]) {
        // One sweep over the cut points of both sorted lists: linear, whatever the extent count.
        var points = (current.flatMap { [$0.start, $0.end] } + previous.flatMap { [$0.start, $0.end] }).sorted()
        points = points.enumerated().filter { $0.offset == 0 || points[$0.offset - 1] != $0.element }.map(\.element)
        var ranges: [(start: Int, end: Int)] = []
        var cleared: [(start: Int, end: Int)] = []
        func add(_ list: inout [(start: Int, end: Int)], _ start: Int, _ end: Int) {
            if let last = list.last, last.end + 1 == start {
                list[list.count - 1].end = end - 1
            } else {
                list.append((start, end - 1))
            }
        }
        var i = 0
        var j = 0
        for (start, end) in zip(points, points.dropFirst()) {
            while i < current.count && current[i].end <= start { i += 1 }
            while j < previous.count && previous[j].end <= start { j += 1 }
            let now = i < current.count && current[i].start <= start ? current[i] : nil
            let before = j < previous.count && previous[j].start <= start ? previous[j] : nil
            let same =
                now.map { n in before.map { b in n.data == b.data && n.dataOffset - n.start == b.dataOffset - b.start } ?? false } ?? (before == nil)
            guard !same, let now else { continue }
            if now.isCleared {
                if before.map({ !$0.isCleared }) ?? true { add(&cleared, start, end) }
            } else {
                add(&ranges, start, end)
            }
        }
        return (ranges, cleared)
    }
}
