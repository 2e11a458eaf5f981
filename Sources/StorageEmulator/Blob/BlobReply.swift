import Foundation
import StorageProtocol

/// A Blob service answer: the response, and for Get Blob the open bytes to stream as its
/// body instead of holding them in memory.
struct BlobReply: Sendable {
    var response: TransportResponse
    var body: BlobBody?

    init(_ response: TransportResponse, body: BlobBody? = nil) {
        self.response = response
        self.body = body
    }
}

/// A range of an open blob, read in pieces as the connection takes them: memory per download
/// stays at one piece whatever the blob's size. For Query Blob Contents the pieces go through
/// the query and the answer's Avro blocks go out instead.
public final class BlobBody: Sendable {
    /// How much is read from disk at a time.
    static let pieceBytes = 256 * 1024

    let reader: any ByteReader
    let offset: Int
    /// The bytes of the blob sent.
    public let length: Int
    /// Sent as a structured message (`x-ms-structured-body`): framed, with CRC64s.
    let structured: Bool
    /// The query run over the bytes (Query Blob Contents).
    let query: QueryRequest?

    init(reader: any ByteReader, offset: Int, length: Int, structured: Bool = false, query: QueryRequest? = nil) {
        self.reader = reader
        self.offset = offset
        self.length = length
        self.structured = structured
        self.query = query
    }

    /// What goes over the wire: the bytes, or the structured message framing them; nil when
    /// it is not known before the end (a query's answer goes out chunked).
    public var wireLength: Int? {
        if query != nil { return nil }
        return structured ? StructuredMessage.encodedLength(contentLength: length) : length
    }

    /// Calls `write` with each piece in order (read on the blocking-I/O threads), then closes
    /// the blob, also when `write` throws (the client went away).
    public func stream(_ write: (Data) async throws -> Void) async throws {
        defer { reader.close() }
        if let query {
            var run = QueryRun(request: query, totalBytes: length)
            try await write(run.start())
            var done = 0
            repeat {
                let (start, count, reader) = (offset + done, min(Self.pieceBytes, length - done), self.reader)
                let piece = count == 0 ? Data() : try await BlockingPool.run { try reader.read(offset: start, length: count) }
                done += count
                let last = done == length
                run.feed(piece)
                // The query's CPU work runs on the blocking pool's threads, a bounded stretch at
                // a time, never on the cooperative pool that serves requests; a client that
                // goes away stops it at the next write.
                var pieceDone = false
                while !pieceDone {
                    let current = run
                    let (next, blocks, finished) = try await BlockingPool.run {
                        var stepped = current
                        let (blocks, finished) = stepped.drain(atEnd: last)
                        return (stepped, blocks, finished)
                    }
                    run = next
                    pieceDone = finished
                    try await write(blocks)
                }
            } while done < length
            return
        }
        var encoder = structured ? StructuredMessage.Encoder(contentLength: length) : nil
        if encoder != nil { try await write(encoder!.start()) }
        var done = 0
        while done < length {
            let (start, count, reader) = (offset + done, min(Self.pieceBytes, length - done), self.reader)
            let piece = try await BlockingPool.run { try reader.read(offset: start, length: count) }
            try await write(encoder == nil ? piece : encoder!.encode(piece))
            done += count
        }
        if encoder != nil, !encoder!.isClosed { try await write(encoder!.close()) }
    }

    /// Closes the blob without sending it (the reply was replaced, e.g. by an injected fault).
    public func discard() { reader.close() }
}
