import Foundation
import PropertyBased
import Testing

@testable import StorageEmulator

/// Azure's CRC64 against its published check value and a bit-by-bit reference, whole and in
/// pieces (an upload is hashed chunk by chunk as it streams).
@Suite struct Crc64Tests {
    static func reference(_ bytes: [UInt8]) -> UInt64 {
        var crc: UInt64 = ~0
        for byte in bytes {
            crc ^= UInt64(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x9A6C_9329_AC4B_C9B5 : crc >> 1 }
        }
        return ~crc
    }

    @Test func checkValue() {
        var crc = Crc64()
        crc.update(data: Data("123456789".utf8))
        #expect(crc.value == 0xAE8B_1486_0A79_9888)
        // The value azure-storage-extensions gives for "123456789", as the SDK reads the header.
        #expect(crc.base64 == Data([0x88, 0x98, 0x79, 0x0A, 0x86, 0x14, 0x8B, 0xAE]).base64EncodedString())
    }

    @Test func piecesGiveTheWholesValue() async {
        await propertyCheck(input: Gen.int(in: 0...255).array(of: 0...200), Gen.int(in: 0...200)) { bytes, cut in
            let bytes = bytes.map(UInt8.init)
            let split = min(cut, bytes.count)
            var crc = Crc64()
            crc.update(data: Data(bytes[..<split]))
            crc.update(data: Data(bytes[split...]))
            #expect(crc.value == Self.reference(bytes))
        }
    }
}
