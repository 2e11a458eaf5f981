import Foundation
import StorageProtocol

/// Azure's structured message, version 1 (`x-ms-structured-body: XSM/1.0; properties=crc64`,
/// docs/PROTOCOL.md §7): a body split into numbered segments, each followed by its CRC64, the
/// whole followed by the content's CRC64, so an upload or a download is checked piece by piece.
/// All integers little-endian:
///
///     message header  version u8 (1) · message length u64 · flags u16 (1: CRC64) · segments u16
///     each segment    number u16 (from 1) · length u64 · the bytes · CRC64 u64 (with the flag)
///     footer          CRC64 of all the content u64 (with the flag)
enum StructuredMessage {
    static let headerValue = "XSM/1.0; properties=crc64"
    static let headerLength = 13
    static let segmentHeaderLength = 10
    static let crcLength = 8
    /// The segment size the emulator encodes downloads with (the SDK's default).
    static let segmentSize = 4 * 1024 * 1024

    /// The length of the message carrying `contentLength` bytes in `segmentSize` segments, CRC64 on.
    static func encodedLength(contentLength: Int, segmentSize: Int = segmentSize) -> Int {
        let segments = max(1, (contentLength + segmentSize - 1) / segmentSize)
        return headerLength + segments * (segmentHeaderLength + crcLength) + contentLength + crcLength
    }

    /// An upload sent as a structured message (`x-ms-structured-body`): its decoder, and the
    /// content length it must decode to (`x-ms-structured-content-length`). Nil for a plain body.
    static func upload(_ request: TransportRequest) throws -> (Decoder, Int)? {
        guard let value = request.headers["x-ms-structured-body"] else { return nil }
        guard value == StructuredMessage.headerValue else { throw ServiceError.invalidHeader("x-ms-structured-body", value) }
        guard let length = request.headers["Content-Length"].flatMap(Int.init) else {
            throw ServiceError(411, .missingContentLengthHeader, "The Content-Length header was not specified: a structured message body needs it.")
        }
        guard let content = request.headers["x-ms-structured-content-length"].flatMap(Int.init), content >= 0 else {
            throw ServiceError(
                400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: x-ms-structured-content-length.")
        }
        return (Decoder(messageLength: length), content)
    }

    /// The content of a structured message held whole (a body that was not streamed in: Put
    /// Block List's, an in-process request's), checked as a streamed one is.
    static func decoded(_ request: TransportRequest) throws -> Data? {
        guard let (decoder, expected) = try upload(request) else { return nil }
        var reading = decoder
        var content = Data()
        try request.body.withUnsafeBytes { raw in try reading.feed(raw) { content.append(contentsOf: $0) } }
        try reading.finish()
        guard content.count == expected else {
            throw invalid("it holds \(content.count) bytes, x-ms-structured-content-length says \(expected)")
        }
        return content
    }

    static func invalid(_ detail: String) -> ServiceError {
        ServiceError(400, .invalidInput, "The structured message body is not valid: \(detail).")
    }

    /// Decodes a structured message as its bytes arrive, handing on the content and checking
    /// every length, number and CRC64 against what was declared; `finish()` checks it ended
    /// where its header said. Memory: a field of at most 13 bytes; content is never held.
    struct Decoder {
        private enum Phase { case header, segmentHeader, content, segmentFooter, messageFooter, done }
        let messageLength: Int
        private var phase = Phase.header
        private var field: [UInt8] = []
        private var consumed = 0
        private var withCRC = false
        private var segments = 0
        private var segment = 0
        private var segmentLeft = 0
        private var segmentCRC = Crc64()
        private var messageCRC = Crc64()
        /// Content bytes handed on so far.
        private(set) var contentLength = 0

        /// `messageLength`: the body's length (its Content-Length), which the header must state.
        init(messageLength: Int) { self.messageLength = messageLength }

        private static func integer(_ bytes: [UInt8]) -> UInt64 {
            bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }

        /// How many bytes the current fixed-size field has.
        private var fieldLength: Int {
            switch phase {
            case .header: StructuredMessage.headerLength
            case .segmentHeader: StructuredMessage.segmentHeaderLength
            case .segmentFooter, .messageFooter: StructuredMessage.crcLength
            case .content, .done: 0
            }
        }

        /// The footers still to come after the current segment's content.
        private var trailerLength: Int {
            (withCRC ? StructuredMessage.crcLength : 0) * 2
                + (segments - segment) * (StructuredMessage.segmentHeaderLength + (withCRC ? StructuredMessage.crcLength : 0))
        }

        mutating func feed(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
            var index = 0
            while index < bytes.count {
                if phase == .done { throw StructuredMessage.invalid("bytes follow the message's end") }
                if phase == .content {
                    let count = min(segmentLeft, bytes.count - index)
                    let piece = UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)])
                    segmentCRC.update(piece)
                    messageCRC.update(piece)
                    try emit(piece)
                    index += count
                    consumed += count
                    contentLength += count
                    segmentLeft -= count
                    if segmentLeft == 0 { try endSegmentContent() }
                    continue
                }
                let take = min(fieldLength - field.count, bytes.count - index)
                field.append(contentsOf: bytes[index..<(index + take)])
                index += take
                consumed += take
                if field.count == fieldLength {
                    let complete = field
                    field = []
                    try fieldDone(complete)
                }
            }
        }

        private mutating func endSegmentContent() throws {
            if withCRC {
                phase = .segmentFooter
            } else {
                phase = segment == segments ? .done : .segmentHeader
            }
        }

        private mutating func fieldDone(_ bytes: [UInt8]) throws {
            switch phase {
            case .header:
                guard bytes[0] == 1 else { throw StructuredMessage.invalid("version \(bytes[0]) is not 1") }
                guard Self.integer(Array(bytes[1..<9])) == UInt64(messageLength) else {
                    throw StructuredMessage.invalid("its header's message length is not the body's length (\(messageLength))")
                }
                let flags = Self.integer(Array(bytes[9..<11]))
                guard flags <= 1 else { throw StructuredMessage.invalid("flags \(flags) are not known") }
                withCRC = flags == 1
                segments = Int(Self.integer(Array(bytes[11..<13])))
                guard segments >= 1 else { throw StructuredMessage.invalid("it has no segment") }
                phase = .segmentHeader
            case .segmentHeader:
                let number = Int(Self.integer(Array(bytes[0..<2])))
                guard number == segment + 1, number <= segments else {
                    throw StructuredMessage.invalid("segment \(number) where \(segment + 1) comes")
                }
                segment = number
                let length = Self.integer(Array(bytes[2..<10]))
                // A declared length bounded by what is left of the message: never trusted further.
                guard length <= UInt64(max(0, messageLength - consumed - trailerLength)) else {
                    throw StructuredMessage.invalid("segment \(number) declares more bytes than the message holds")
                }
                segmentLeft = Int(length)
                segmentCRC = Crc64()
                phase = .content
                if segmentLeft == 0 { try endSegmentContent() }
            case .segmentFooter:
                guard Self.integer(bytes) == segmentCRC.value else {
                    throw ServiceError(400, .crc64Mismatch, "The CRC64 of segment \(segment) of the structured message does not match its bytes.")
                }
                phase = segment == segments ? .messageFooter : .segmentHeader
            case .messageFooter:
                guard Self.integer(bytes) == messageCRC.value else {
                    throw ServiceError(400, .crc64Mismatch, "The CRC64 of the structured message does not match its content.")
                }
                phase = .done
            case .content, .done:
                break
            }
        }

        /// Checks the message is complete: every segment and footer its header announced.
        func finish() throws {
            guard phase == .done, consumed == messageLength else { throw StructuredMessage.invalid("it ends before its last segment") }
        }
    }

    /// Encodes content as it is read, segment by segment: the header, then each segment's
    /// header, bytes and CRC64, then the content's CRC64.
    struct Encoder {
        let contentLength: Int
        let segmentSize: Int
        private var messageCRC = Crc64()
        private var segmentCRC = Crc64()
        private var segment = 0
        private var segmentLeft = 0
        private var written = 0
        /// Whether the footer was written.
        private(set) var isClosed = false

        init(contentLength: Int, segmentSize: Int = StructuredMessage.segmentSize) {
            self.contentLength = contentLength
            self.segmentSize = segmentSize
        }

        var segments: Int { max(1, (contentLength + segmentSize - 1) / segmentSize) }

        private static func bytes(_ value: UInt64, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

        /// The message header and the first segment's header.
        mutating func start() -> Data {
            var out = [UInt8(1)] + Self.bytes(UInt64(StructuredMessage.encodedLength(contentLength: contentLength, segmentSize: segmentSize)), 8)
            out += Self.bytes(1, 2) + Self.bytes(UInt64(segments), 2)
            return Data(out) + beginSegment()
        }

        private mutating func beginSegment() -> Data {
            segment += 1
            segmentLeft = min(segmentSize, contentLength - written)
            segmentCRC = Crc64()
            return Data(Self.bytes(UInt64(segment), 2) + Self.bytes(UInt64(segmentLeft), 8))
        }

        /// The next content bytes (at most what is left of the content), framed: each segment
        /// closed by its CRC64 and the next opened, the message closed after the last.
        mutating func encode(_ content: Data) -> Data {
            var out = Data()
            var rest = content[...]
            repeat {
                let count = min(segmentLeft, rest.count)
                let piece = rest.prefix(count)
                piece.withUnsafeBytes {
                    segmentCRC.update($0)
                    messageCRC.update($0)
                }
                out += piece
                rest = rest.dropFirst(count)
                segmentLeft -= count
                written += count
                if segmentLeft == 0 {
                    out += Data(Self.bytes(segmentCRC.value, 8))
                    if written < contentLength {
                        out += beginSegment()
                    } else {
                        out += Data(Self.bytes(messageCRC.value, 8))
                        isClosed = true
                        break
                    }
                }
            } while !rest.isEmpty
            return out
        }

        /// The closing bytes when the content ended without them (empty content).
        mutating func close() -> Data { isClosed ? Data() : encode(Data()) }
    }
}
