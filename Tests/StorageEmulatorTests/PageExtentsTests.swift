import PropertyBased
import Testing

@testable import StorageEmulator

/// The page range algebra against a dense model: any sequence of writes and clears gives, byte
/// for byte, what the same operations on a plain array give, and the extents stay sorted and
/// apart.
@Suite struct PageExtentsTests {
    /// Each page's "byte" is the id of the write that last covered it (0: never, or cleared).
    static func read(_ extents: [PageExtent], pages: Int) -> [Int] {
        var out = [Int](repeating: 0, count: pages)
        for extent in extents {
            for page in extent.start..<extent.end { out[page] = Int(extent.data)! * 1000 + extent.dataOffset + (page - extent.start) }
        }
        return out
    }

    @Test func writesAndClearsMatchADenseModel() async {
        let op = zip(Gen.int(in: 0...15), Gen.int(in: 1...16), Gen.bool)
        await propertyCheck(input: op.array(of: 1...30)) { ops in
            var extents: [PageExtent] = []
            var model = [Int](repeating: 0, count: 16)
            for (index, (start, length, isWrite)) in ops.enumerated() {
                let end = min(start + length, 16)
                if isWrite {
                    let id = index + 1
                    extents = PageExtents.writing(PageExtent(start: start, end: end, data: String(id), dataOffset: 0), into: extents)
                    for page in start..<end { model[page] = id * 1000 + (page - start) }
                } else {
                    extents = PageExtents.removing(start, end, from: extents)
                    for page in start..<end { model[page] = 0 }
                }
                #expect(Self.read(extents, pages: 16) == model)
                #expect(zip(extents, extents.dropFirst()).allSatisfy { $0.end <= $1.start && $0.start < $0.end })
            }
            // The ranges cover exactly the written pages, adjacent ones joined.
            let covered = PageExtents.ranges(extents).flatMap { Array($0.start...$0.end) }
            #expect(covered == model.indices.filter { model[$0] != 0 })
            #expect(zip(PageExtents.ranges(extents), PageExtents.ranges(extents).dropFirst()).allSatisfy { $0.end + 1 < $1.start })
        }
    }

    @Test func freedObjectsAreOnlyThoseNoExtentKeeps() {
        let before = [PageExtent(start: 0, end: 4, data: "a", dataOffset: 0), PageExtent(start: 4, end: 8, data: "b", dataOffset: 0)]
        // Writing over the middle of "a" keeps both of its ends: "a" is not freed; "b" is.
        let after = PageExtents.writing(PageExtent(start: 1, end: 8, data: "c", dataOffset: 0), into: before)
        #expect(after.map(\.data) == ["a", "c"])
        #expect(PageExtents.freed(before: before, after: after) == ["b"])
        let split = PageExtents.removing(1, 2, from: before)
        #expect(
            split == [
                PageExtent(start: 0, end: 1, data: "a", dataOffset: 0), PageExtent(start: 2, end: 4, data: "a", dataOffset: 2),
                PageExtent(start: 4, end: 8, data: "b", dataOffset: 0),
            ])
    }
}

extension PageExtentsTests {
    /// A diff against a dense model of what changed: pages whose content differs are ranges,
    /// pages cleared since are cleared ranges.
    @Test func diffMatchesADenseModel() async {
        let op = zip(Gen.int(in: 0...15), Gen.int(in: 1...16), Gen.bool)
        await propertyCheck(input: op.array(of: 0...12), op.array(of: 0...12)) { before, after in
            var extents: [PageExtent] = []
            var id = 0
            func apply(_ ops: [(Int, Int, Bool)]) {
                for (start, length, isWrite) in ops {
                    let end = min(start + length, 16)
                    id += 1
                    extents = PageExtents.writing(PageExtent(start: start, end: end, data: isWrite ? String(id) : "", dataOffset: 0), into: extents)
                }
            }
            apply(before)
            let snapshot = extents
            apply(after)
            func content(_ list: [PageExtent]) -> [String?] {
                var pages = [String?](repeating: nil, count: 16)
                for e in list { for p in e.start..<e.end { pages[p] = e.isCleared ? "" : "\(e.data)@\(e.dataOffset + p - e.start)" } }
                return pages
            }
            let (was, now) = (content(snapshot), content(extents))
            let (ranges, cleared) = PageExtents.diff(current: extents, previous: snapshot)
            let changed = Set(ranges.flatMap { Array($0.start...$0.end) })
            let clearedPages = Set(cleared.flatMap { Array($0.start...$0.end) })
            for p in 0..<16 {
                let written = now[p].map { !$0.isEmpty } ?? false
                #expect(changed.contains(p) == (written && now[p] != was[p]), "page \(p)")
                #expect(clearedPages.contains(p) == (now[p] == "" && (was[p] == nil || was[p] != "")), "page \(p)")
            }
        }
    }

    /// The diff is one sweep: 20,000 extents on each side take milliseconds (it was quadratic:
    /// 4,000 took 2.6 s in a release build; 20,000 would take about a minute). Kept small: the
    /// suite runs beside timing tests on two cores.
    @Test(.timeLimit(.minutes(1))) func diffIsLinear() {
        let now = (0..<20_000).map { PageExtent(start: $0 * 1024, end: $0 * 1024 + 512, data: "n\($0)", dataOffset: 0) }
        let before = (0..<20_000).map { PageExtent(start: $0 * 1024, end: $0 * 1024 + 512, data: $0 % 2 == 0 ? "n\($0)" : "o\($0)", dataOffset: 0) }
        let started = ContinuousClock.now
        let (ranges, cleared) = PageExtents.diff(current: now, previous: before)
        #expect(ranges.count == 10_000 && cleared.isEmpty)
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
