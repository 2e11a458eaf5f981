/// Writes one FlatBuffers buffer the way every FlatBuffers library does: back to front, each
/// scalar aligned to its size counted from the buffer's end, a table's vtable written just before
/// it (identical vtables shared), fields equal to their default left out. Following the same
/// algorithm matters beyond validity: Azure's Arrow answers are compared byte for byte by the
/// SDKs' tests, and the same calls in the same order give the same bytes in any implementation.
///
/// Offsets returned are distances from the buffer's end (``offset``), as FlatBuffers counts them.
struct FlatBufferBuilder {
    /// The buffer, filled from the end: the bytes written are `storage[head...]`.
    private var storage: [UInt8]
    private var head: Int
    private var minimumAlignment = 1
    /// Positions of the current table's fields (0: absent), while a table is open.
    private var fieldPositions: [Int] = []
    private var tableStart = 0
    private var vectorCount = 0
    /// Positions of the vtables written so far, to share identical ones.
    private var vtables: [Int] = []

    init(capacity: Int = 256) {
        storage = [UInt8](repeating: 0, count: max(capacity, 16))
        head = storage.count
    }

    /// Bytes written so far: the position of whatever is written next, counted from the end.
    var offset: Int { storage.count - head }

    /// The finished buffer.
    var bytes: [UInt8] { Array(storage[head...]) }

    // MARK: Raw writing

    private mutating func reserve(_ count: Int) {
        guard head < count else { return }
        let used = offset
        var size = storage.count
        while size - used < count { size *= 2 }
        var grown = [UInt8](repeating: 0, count: size)
        grown.replaceSubrange((size - used)..<size, with: storage[head...])
        storage = grown
        head = size - used
    }

    private mutating func pad(_ count: Int) {
        reserve(count)
        for _ in 0..<count {
            head -= 1
            storage[head] = 0
        }
    }

    /// Aligns so that, after `additional` more bytes, a `size`-byte value is aligned.
    private mutating func prepare(_ size: Int, additional: Int) {
        minimumAlignment = max(minimumAlignment, size)
        let alignment = (~(offset + additional) &+ 1) & (size - 1)
        pad(alignment)
    }

    private mutating func put<T: FixedWidthInteger>(_ value: T) {
        let size = MemoryLayout<T>.size
        reserve(size)
        head -= size
        var v = value.littleEndian
        for i in 0..<size {
            storage[head + i] = UInt8(truncatingIfNeeded: v)
            v >>= 8
        }
    }

    // MARK: Scalars, offsets, vectors, strings

    mutating func add<T: FixedWidthInteger>(_ value: T) {
        prepare(MemoryLayout<T>.size, additional: 0)
        put(value)
    }

    /// A reference to something written earlier (its ``offset``).
    mutating func addOffset(_ target: Int) {
        prepare(4, additional: 0)
        put(Int32(offset - target + 4))
    }

    /// Opens a vector of `count` elements of `elementSize` bytes; the elements are then added
    /// last first.
    mutating func startVector(elementSize: Int, count: Int, alignment: Int) {
        vectorCount = count
        prepare(4, additional: elementSize * count)
        prepare(alignment, additional: elementSize * count)
    }

    mutating func endVector() -> Int {
        put(Int32(vectorCount))
        return offset
    }

    /// A vector of references, given in order.
    mutating func vector(ofOffsets targets: [Int]) -> Int {
        startVector(elementSize: 4, count: targets.count, alignment: 4)
        for target in targets.reversed() { addOffset(target) }
        return endVector()
    }

    /// A vector of structs of 64-bit pairs (Arrow's `Buffer` and `FieldNode`), given in order.
    mutating func vector(ofPairs pairs: [(Int64, Int64)]) -> Int {
        startVector(elementSize: 16, count: pairs.count, alignment: 8)
        for (first, second) in pairs.reversed() {
            prepare(8, additional: 16)
            put(second)
            put(first)
        }
        return endVector()
    }

    /// A string: its UTF-8 bytes, a terminating zero, its length before them.
    mutating func string(_ utf8: [UInt8]) -> Int {
        prepare(4, additional: utf8.count + 1)
        put(UInt8(0))
        reserve(utf8.count)
        head -= utf8.count
        storage.replaceSubrange(head..<(head + utf8.count), with: utf8)
        vectorCount = utf8.count
        return endVector()
    }

    // MARK: Tables

    mutating func startTable(fields: Int) {
        fieldPositions = [Int](repeating: 0, count: fields)
        tableStart = offset
    }

    /// A scalar field, left out when it equals its default.
    mutating func field<T: FixedWidthInteger>(_ index: Int, _ value: T, default defaultValue: T) {
        guard value != defaultValue else { return }
        add(value)
        fieldPositions[index] = offset
    }

    mutating func field(_ index: Int, _ value: Bool, default defaultValue: Bool = false) {
        field(index, UInt8(value ? 1 : 0), default: defaultValue ? 1 : 0)
    }

    /// A reference field.
    mutating func field(_ index: Int, offset target: Int) {
        addOffset(target)
        fieldPositions[index] = offset
    }

    /// Closes the table: its vtable (trailing absent fields trimmed) goes just before it, or an
    /// identical earlier vtable is referred to instead.
    mutating func endTable() -> Int {
        add(Int32(0))
        let table = offset
        var count = fieldPositions.count
        while count > 0 && fieldPositions[count - 1] == 0 { count -= 1 }
        for position in fieldPositions[..<count].reversed() {
            add(Int16(position == 0 ? 0 : table - position))
        }
        add(Int16(table - tableStart))
        add(Int16((count + 2) * 2))
        let vtable = offset
        let vtableBytes = storage[head..<(head + (count + 2) * 2)]
        var shared: Int?
        for earlier in vtables {
            let start = storage.count - earlier
            let length = Int(storage[start]) | Int(storage[start + 1]) << 8
            if length == vtableBytes.count, storage[start..<(start + length)].elementsEqual(vtableBytes) {
                shared = earlier
                break
            }
        }
        if let shared {
            // Drop the new vtable; the table points at the earlier one.
            head = storage.count - table
            write(Int32(shared - table), at: table)
        } else {
            vtables.append(vtable)
            write(Int32(vtable - table), at: table)
        }
        fieldPositions = []
        return table
    }

    private mutating func write(_ value: Int32, at position: Int) {
        let start = storage.count - position
        var v = UInt32(bitPattern: value)
        for i in 0..<4 {
            storage[start + i] = UInt8(truncatingIfNeeded: v)
            v >>= 8
        }
    }

    /// Writes the root reference; the buffer is then ``bytes``.
    mutating func finish(root: Int) {
        prepare(minimumAlignment, additional: 4)
        addOffset(root)
    }
}
