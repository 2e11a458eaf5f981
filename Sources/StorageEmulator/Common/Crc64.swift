import Foundation

/// Azure Storage's CRC64 (`x-ms-content-crc64`): CRC-64/NVME — polynomial 0xAD93D23594C93659
/// reflected, initial value and final xor all ones; check value of "123456789" is
/// 0xAE8B14860A799888. Sent as the 8 bytes little-endian, base64. Computed slicing by 8 (eight
/// tables, eight bytes a step), so hashing an upload costs less than its MD5.
struct Crc64: Sendable {
    private static let tables: [[UInt64]] = {
        let poly: UInt64 = 0x9A6C_9329_AC4B_C9B5
        var tables = [[UInt64]](repeating: [UInt64](repeating: 0, count: 256), count: 8)
        for i in 0..<256 {
            var crc = UInt64(i)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ poly : crc >> 1 }
            tables[0][i] = crc
        }
        for i in 0..<256 {
            for t in 1..<8 { tables[t][i] = (tables[t - 1][i] >> 8) ^ tables[0][Int(tables[t - 1][i] & 0xFF)] }
        }
        return tables
    }()

    private var state: UInt64 = ~0

    init() {}

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = state
        var index = 0
        let count = bytes.count
        Self.tables.withUnsafeBufferPointer { t in
            let (t0, t1, t2, t3, t4, t5, t6, t7) = (t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7])
            while index + 8 <= count {
                var word: UInt64 = 0
                for k in 0..<8 { word |= UInt64(bytes[index + k]) << (8 * UInt64(k)) }
                crc ^= word
                crc =
                    t7[Int(crc & 0xFF)] ^ t6[Int((crc >> 8) & 0xFF)] ^ t5[Int((crc >> 16) & 0xFF)] ^ t4[Int((crc >> 24) & 0xFF)]
                    ^ t3[Int((crc >> 32) & 0xFF)] ^ t2[Int((crc >> 40) & 0xFF)] ^ t1[Int((crc >> 48) & 0xFF)] ^ t0[Int(crc >> 56)]
                index += 8
            }
            while index < count {
                crc = (crc >> 8) ^ t0[Int((crc ^ UInt64(bytes[index])) & 0xFF)]
                index += 1
            }
        }
        state = crc
    }

    mutating func update(data: Data) { data.withUnsafeBytes { update($0) } }

    /// The CRC of everything so far.
    var value: UInt64 { ~state }

    /// As Azure sends it: the 8 bytes little-endian, base64.
    var base64: String {
        var little = value.littleEndian
        return withUnsafeBytes(of: &little) { Data($0) }.base64EncodedString()
    }

    static func base64(of data: Data) -> String {
        var crc = Crc64()
        crc.update(data: data)
        return crc.base64
    }
}
