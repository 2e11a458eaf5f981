import Foundation
import PropertyBased
import Testing

@testable import StorageEmulator

/// The structured message codec: what the encoder frames, fed to the decoder in any pieces,
/// comes back byte for byte; a message whose bytes, lengths, numbers or CRCs were changed
/// is refused (every byte of a frame matters), and a declared length never outgrows the body.
@Suite struct StructuredMessageTests {
    static func encode(_ content: [UInt8], segmentSize: Int) -> [UInt8] {
        var encoder = StructuredMessage.Encoder(contentLength: content.count, segmentSize: segmentSize)
        var out = encoder.start()
        var index = 0
        // Fed in uneven pieces, as a download's reads come.
        while index < content.count {
            let count = min(7 + index % 13, content.count - index)
            out += encoder.encode(Data(content[index..<(index + count)]))
            index += count
        }
        out += encoder.close()
        return [UInt8](out)
    }

    static func decode(_ message: [UInt8], pieces: Int) throws -> [UInt8] {
        var decoder = StructuredMessage.Decoder(messageLength: message.count)
        var out: [UInt8] = []
        let size = max(1, message.count / max(1, pieces))
        var index = 0
        while index < message.count {
            let end = min(index + size, message.count)
            try message[index..<end].withUnsafeBytes { try decoder.feed($0) { out.append(contentsOf: $0) } }
            index = end
        }
        try decoder.finish()
        return out
    }

    @Test func whatIsEncodedDecodesInAnyPieces() async {
        let input = zip(Gen.uint8().array(of: 0...300), Gen.int(in: 1...64), Gen.int(in: 1...40))
        await propertyCheck(input: input) { content, segmentSize, pieces in
            let message = Self.encode(content, segmentSize: segmentSize)
            #expect(message.count == StructuredMessage.encodedLength(contentLength: content.count, segmentSize: segmentSize))
            #expect((try? Self.decode(message, pieces: pieces)) == content)
        }
    }

    @Test func anyChangedByteIsRefused() async {
        let input = zip(Gen.uint8().array(of: 1...80), Gen.int(in: 1...16), Gen.int(in: 0...10_000), Gen.uint8(in: 1...255))
        await propertyCheck(input: input) { content, segmentSize, position, flip in
            var message = Self.encode(content, segmentSize: segmentSize)
            let at = position % message.count
            message[at] ^= flip
            #expect(throws: ServiceError.self) { try Self.decode(message, pieces: 3) }
        }
    }

    @Test func truncatedOrExtendedMessagesAreRefused() throws {
        let message = Self.encode(Array(repeating: 7, count: 100), segmentSize: 30)
        #expect(throws: ServiceError.self) { try Self.decode(Array(message.dropLast()), pieces: 1) }
        #expect(throws: ServiceError.self) { try Self.decode(message + [0], pieces: 1) }
        // A segment declaring more than the body holds is refused at its header, before any byte.
        var lying = message
        lying[15] = 0xFF  // segment 1's length, a byte well above the rest of the body
        var decoder = StructuredMessage.Decoder(messageLength: lying.count)
        var handedOn = 0
        #expect(throws: ServiceError.self) {
            try lying.withUnsafeBytes { try decoder.feed($0) { handedOn += $0.count } }
        }
        #expect(handedOn == 0)
        #expect(try Self.decode(message, pieces: 5) == Array(repeating: 7, count: 100))
    }

    @Test func emptyContentIsOneEmptySegment() throws {
        let message = Self.encode([], segmentSize: 4)
        #expect(message.count == 13 + 10 + 8 + 8)
        #expect(try Self.decode(message, pieces: 1) == [])
    }
}
