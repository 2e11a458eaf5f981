import AzureStorage
import Foundation

/// What `azseed scan` saw of one table partition, in bounded memory: how many entities, per
/// property its statistics, the RowKeys (up to ``rowKeyLimit``), every entity while the
/// partition is small (``keepLimit``; references and rows need them) and a deterministic
/// sample — the ``sampleSize`` entities whose (PartitionKey, RowKey) hash lowest, so the same
/// data always gives the same sample, whatever order it is read in.
public struct PartitionObservation: Sendable {
    public let table: String
    public let partition: String
    public private(set) var count = 0
    /// Per property name (by its bytes), in byte order when read back.
    var properties: [ExactString: PropertyObservation] = [:]
    /// Every RowKey, nil once there were more than ``rowKeyLimit``.
    var rowKeys: Set<ExactString>? = []
    var allRowKeysAreGUIDs = true
    /// Every entity, nil once there were more than ``keepLimit`` (or the scan's budget for
    /// kept entities was spent: ``PartitionObservations/keptBudget``).
    var entities: [TableEntity]? = []
    /// About how many bytes the kept entities hold (Azure's measure of an entity).
    private(set) var keptBytes = 0
    /// The sample, as a max-heap on the hash (the worst kept entity on top).
    private var heap: [(hash: UInt64, entity: TableEntity)] = []
    let sampleSize: Int
    /// Where `scan --copy-values` wrote the partition's entities as they are
    /// (``CopiedEntityFiles``), relative to the dataset folder: the kind copies them.
    public var copiedFile: String?

    static let rowKeyLimit = 200_000
    static let keepLimit = 5_000

    /// Whether keys are kept too (RowKeys, kept entities, whether they are GUIDs): what the
    /// inference reads. The fidelity report compares property statistics alone.
    let keepsKeys: Bool

    public init(table: String, partition: String, sampleSize: Int) {
        self.init(table: table, partition: partition, sampleSize: sampleSize, keepsKeys: true)
    }

    init(table: String, partition: String, sampleSize: Int, keepsKeys: Bool) {
        self.table = table
        self.partition = partition
        self.sampleSize = sampleSize
        self.keepsKeys = keepsKeys
        if !keepsKeys {
            rowKeys = nil
            entities = nil
            allRowKeysAreGUIDs = false
        }
    }

    /// Whether `key` is a GUID as text (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, hex digits of
    /// either case), read as bytes: Foundation's UUID parser went through sscanf, a twentieth of
    /// a scan.
    static func isGUID(_ key: String) -> Bool {
        guard key.utf8.count == 36 else { return false }
        for (i, b) in key.utf8.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                if b != UInt8(ascii: "-") { return false }
            } else if !((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)) {
                return false
            }
        }
        return true
    }

    public mutating func observe(_ entity: TableEntity) {
        count += 1
        let hash = StableHash.keys(entity.partitionKey, entity.rowKey)
        observeProperties(entity.properties.lazy.map { ($0.key, $0.value) }, hash: hash)
        if rowKeys != nil {
            rowKeys!.insert(ExactString(entity.rowKey))
            if rowKeys!.count > Self.rowKeyLimit { rowKeys = nil }
        }
        if allRowKeysAreGUIDs, !Self.isGUID(entity.rowKey) { allRowKeysAreGUIDs = false }
        if entities != nil {
            entities!.append(entity)
            keptBytes += StorageNames.entitySize(entity)
            if entities!.count > Self.keepLimit { stopKeeping() }
        }
        if heap.count < sampleSize {
            heap.append((hash, entity))
            siftUp(heap.count - 1)
        } else if sampleSize > 0, hash < heap[0].hash {
            heap[0] = (hash, entity)
            siftDown(0)
        }
    }

    /// Lets go of the kept entities: the partition is inferred from its statistics and
    /// sample, as a large one is.
    mutating func stopKeeping(pastBudget: Bool = false) {
        entities = nil
        keptBytes = 0
        if pastBudget { self.pastBudget = true }
    }

    /// Whether the partition let its kept entities go because the scan's budget was spent
    /// (not because it was large): the summary says how many did.
    private(set) var pastBudget = false

    /// A generated entity's property statistics, for an observation that keeps no keys and
    /// no sample (its names and values are read as they are: no dictionary is built).
    mutating func observeStatistics(_ entity: GeneratedEntity) {
        count += 1
        let hash = StableHash.keys(entity.partitionKey, entity.rowKey)
        observeProperties(zip(entity.names, entity.values), hash: hash)
    }

    /// Each property's statistics, whatever form the entity holds them in.
    private mutating func observeProperties(_ pairs: some Sequence<(String, EdmValue)>, hash: UInt64) {
        for (name, value) in pairs {
            properties[ExactString(name), default: PropertyObservation()].observe(value, entityHash: hash)
        }
    }

    /// Leaves out each property whose name another one's equals as Swift compares text (the
    /// same letters in other bytes: composed `Café`, decomposed `Cafe` + U+0301) and returns
    /// them, each with the name kept (the first in byte order). Azure keeps both as two
    /// properties; a YAML mapping's keys cannot tell them apart, so a dataset naming both does
    /// not load.
    mutating func dropCanonicalTwins() -> [(dropped: String, kept: String)] {
        // Keyed by `String` on purpose: its hashing and `==` are the YAML reader's (canonical
        // equivalence), and one lookup a name keeps this linear in the names.
        var firstOf: [String: String] = [:]
        var dropped: [(dropped: String, kept: String)] = []
        for name in propertyNames {
            if let twin = firstOf[name] {
                dropped.append((name, twin))
                properties[ExactString(name)] = nil
            } else {
                firstOf[name] = name
            }
        }
        return dropped
    }

    /// Puts the kept entities in RowKey byte order, as the service lists them, so what is
    /// inferred does not depend on the order they were read in.
    mutating func sortKept() {
        entities?.sort { $0.rowKey.byteOrder($1.rowKey) < 0 }
    }

    /// The sample in RowKey byte order.
    public var sample: [TableEntity] {
        heap.map(\.entity).sorted { $0.rowKey.byteOrder($1.rowKey) < 0 }
    }

    /// Property names in byte order.
    var propertyNames: [String] { properties.keys.map(\.string).sorted { $0.byteOrder($1) < 0 } }

    func property(_ name: String) -> PropertyObservation? { properties[ExactString(name)] }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].hash > heap[parent].hash else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var largest = parent
            if left < heap.count, heap[left].hash > heap[largest].hash { largest = left }
            if right < heap.count, heap[right].hash > heap[largest].hash { largest = right }
            if largest == parent { return }
            heap.swapAt(parent, largest)
            parent = largest
        }
    }
}

/// One property's statistics over a partition.
struct PropertyObservation: Sendable {
    var present = 0
    /// How many values of each EDM type, by ``EdmType/allCases`` position (an array: a
    /// dictionary lookup a value was a tenth of a scan).
    private var typeTally = [Int](repeating: 0, count: EdmType.allCases.count)
    /// How many values of each EDM type seen (types not seen are absent).
    var typeCounts: [EdmType: Int] {
        var counts: [EdmType: Int] = [:]
        for (type, n) in zip(EdmType.allCases, typeTally) where n > 0 { counts[type] = n }
        return counts
    }
    /// Each distinct value and how often it occurs; nil once there were more than ``distinctLimit``.
    var distinct: [EdmValue: Int]? = [:]
    var minInt: Int64?, maxInt: Int64?
    var minDouble: Double?, maxDouble: Double?
    var minTicks: Int64?, maxTicks: Int64?
    /// The coarsest of day, hour, minute, second that every date is a multiple of (in ticks).
    var dateResolution = EdmDateTime.ticksPerDay
    var maxLength = 0
    /// Hashes of the values' text seen, while no two were equal and there were at
    /// most ``hashLimit``: whether a column is unique past ``distinctLimit`` values.
    private var valueHashes: Set<UInt64>? = []
    private(set) var sawRepeat = false
    /// Integers: the first seen, the greatest common divisor of every difference from it, and
    /// the wrapping sum of each value's mix — what tells an arithmetic progression at any size.
    private var firstInt: Int64?
    private(set) var stepGCD: UInt64 = 0
    private(set) var intHashSum: UInt64 = 0
    /// Doubles: the most decimal places any has (nil once one needs an exponent or over 6).
    private(set) var maxDecimals: Int? = 0

    /// Numbers and dates (as doubles, dates in ticks) of the entities whose keys hash lowest,
    /// at most ``pointLimit``: what the fidelity page's histograms are drawn from, the same
    /// whatever order the entities are read in. The worst kept is at ``worstPoint``.
    private(set) var points: [(hash: UInt64, value: Double)] = []
    private var worstPoint = 0

    static let distinctLimit = 1_000
    /// The bytes of long values (over 64) ``distinct`` may hold before it stops counting.
    static let distinctByteLimit = 256 << 10
    private var distinctBytes = 0

    /// The size of a text or binary value over 64 bytes; nil for shorter and other values.
    static func longValueBytes(_ value: EdmValue) -> Int? {
        switch value {
        case .string(let s) where s.utf8.count > 64: s.utf8.count
        case .binary(let b) where b.count > 64: b.count
        default: nil
        }
    }
    static let hashLimit = 200_000
    static let pointLimit = 400

    /// The EDM type most values have.
    var type: EdmType { typeCounts.max { $0.value != $1.value ? $0.value < $1.value : $0.key.rawValue > $1.key.rawValue }?.key ?? .string }

    /// How many distinct values, when all were counted.
    var distinctCount: Int? { distinct?.count }

    /// Whether every value's text differs (a dataset holds a column in one EDM type, so Int32 5
    /// and Int64 5 are one value there): nil when too many were seen to tell.
    var allDistinct: Bool? {
        if sawRepeat { return false }
        return valueHashes == nil ? nil : true
    }

    /// Whether the integers seen are exactly `start, start + step, …` (`count` of them, each
    /// once, step > 0): the differences share the step, the range holds exactly `count` steps,
    /// and the values' hash sum is the progression's.
    func progression(count: Int) -> (start: Int64, step: Int64)? {
        guard count >= 2, present == count, stepGCD > 0, stepGCD <= UInt64(Int64.max), let low = minInt, let high = maxInt else { return nil }
        let step = Int64(stepGCD)
        guard Int128(high) - Int128(low) == Int128(step) * Int128(count - 1) else { return nil }
        var sum: UInt64 = 0
        for k in 0..<count { sum &+= SeedRandom.mix(UInt64(bitPattern: low &+ Int64(k) &* step)) }
        return sum == intHashSum ? (low, step) : nil
    }

    mutating func observe(_ value: EdmValue, entityHash: UInt64 = 0) {
        present += 1
        let point: Double? =
            switch value {
            case .int32(let n): Double(n)
            case .int64(let n): Double(n)
            case .double(let d) where d.isFinite: d
            case .dateTime(let date): Double(date.ticks)
            default: nil
            }
        if let point {
            if points.count < Self.pointLimit {
                points.append((entityHash, point))
                if points[worstPoint].hash < entityHash { worstPoint = points.count - 1 }
            } else if entityHash < points[worstPoint].hash {
                points[worstPoint] = (entityHash, point)
                worstPoint = points.indices.max { points[$0].hash < points[$1].hash }!
            }
        }
        typeTally[value.type.ordinal] += 1
        if distinct != nil {
            // Long values count their bytes too: a thousand distinct 4 KB texts in each of many
            // partitions were most of a scan's memory (and such a column is no category).
            if let long = Self.longValueBytes(value), distinct![value] == nil {
                distinctBytes += long
                if distinctBytes > Self.distinctByteLimit { distinct = nil }
            }
            if distinct != nil {
                distinct![value, default: 0] += 1
                if distinct!.count > Self.distinctLimit { distinct = nil }
            }
        }
        if !sawRepeat, valueHashes != nil {
            if !valueHashes!.insert(StableHash.keys("value", value.text)).inserted {
                sawRepeat = true
                valueHashes = nil
            } else if valueHashes!.count > Self.hashLimit {
                valueHashes = nil
            }
        }
        switch value {
        case .int32(let n): note(Int64(n))
        case .int64(let n): note(n)
        case .double(let d) where d.isFinite:
            minDouble = Swift.min(minDouble ?? d, d)
            maxDouble = Swift.max(maxDouble ?? d, d)
            if let places = maxDecimals {
                let text = EdmValue.double(d).text
                if text.contains(where: { $0 == "e" || $0 == "E" }) {
                    maxDecimals = nil
                } else {
                    let decimals = text.split(separator: ".", maxSplits: 1).dropFirst().first?.count ?? 0
                    maxDecimals = decimals > 6 ? nil : Swift.max(places, decimals)
                }
            }
        case .dateTime(let date):
            minTicks = Swift.min(minTicks ?? date.ticks, date.ticks)
            maxTicks = Swift.max(maxTicks ?? date.ticks, date.ticks)
            let fits = Self.dateSteps.first { date.ticks % $0 == 0 } ?? 1
            dateResolution = Swift.min(dateResolution, fits)
        case .string(let s): maxLength = Swift.max(maxLength, s.utf16.count)
        default: break
        }
    }

    /// Day, hour, minute, second in ticks: the resolutions a date column may have.
    private static let dateSteps = [
        EdmDateTime.ticksPerDay, 3600 * EdmDateTime.ticksPerSecond, EdmDateTime.ticksPerMinute, EdmDateTime.ticksPerSecond,
    ]

    private mutating func note(_ n: Int64) {
        minInt = Swift.min(minInt ?? n, n)
        maxInt = Swift.max(maxInt ?? n, n)
        intHashSum &+= SeedRandom.mix(UInt64(bitPattern: n))
        if let first = firstInt {
            var a = stepGCD
            var b = UInt64(clamping: (Int128(n) - Int128(first)).magnitude)
            while b != 0 { (a, b) = (b, a % b) }
            stepGCD = a
        } else {
            firstInt = n
        }
    }

    /// How many entities hold this integer (as Int32 or Int64); ``distinctLimit`` counts none
    /// past it, then 0 (rare, as far as anyone can tell).
    func seen(_ n: Int64) -> Int {
        guard let distinct else { return 0 }
        return (distinct[.int64(n)] ?? 0) + (Int32(exactly: n).map { distinct[.int32($0)] ?? 0 } ?? 0)
    }

    /// How many entities hold `value`, when every value was counted (else 0).
    func seen(_ value: EdmValue) -> Int { distinct?[value] ?? 0 }

    /// Distinct values of the column's type from most to least frequent (ties in value order),
    /// when all were counted. A dataset holds a column in one EDM type: values of another type
    /// (a few Int64s among Int32s) are left out of what it picks from.
    var byFrequency: [(value: EdmValue, count: Int)]? {
        let type = self.type
        return distinct.map { counts in
            counts.filter { $0.key.type == type }.map { ($0.key, $0.value) }.sorted { a, b in
                a.1 != b.1 ? a.1 > b.1 : a.0.text.byteOrder(b.0.text) < 0
            }
        }
    }
}
