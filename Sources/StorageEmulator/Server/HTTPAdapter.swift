import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StorageProtocol

/// The request context: Hummingbird's core storage plus the channel, so an injected fault
/// can drop the connection.
public struct EmulatorRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// Hands each HTTP request to the emulator core as an `TransportRequest` (the raw path as sent,
/// so signatures verify) and writes its reply back.
struct EmulatorResponder: HTTPResponder {
    typealias Context = EmulatorRequestContext
    let core: StorageEmulatorCore
    let service: EmulatorServiceKind

    func respond(to request: Request, context: Context) async throws -> Response {
        try await RequestOrigin.$clientAddress.withValue(context.channel.remoteAddress?.ipAddress) {
            try await answer(request, context: context)
        }
    }

    private func answer(_ request: Request, context: Context) async throws -> Response {
        let started = ContinuousClock.now
        /// An answer given here, before the core has the request: logged like the core's own.
        func early(_ response: TransportResponse, _ request: TransportRequest) -> Response {
            core.record(request, service: service, requestBytes: 0, reply: .response(response), started: started)
            return Self.response(response)
        }
        var headers = HeaderFields()
        for field in request.headers { headers[field.name.rawName] = field.value }
        if let authority = request.head.authority { headers["Host"] = authority }
        let target = request.head.path ?? "/"
        let method = request.method.rawValue
        // The Host header becomes the logged URL: only host[:port] characters, so a client
        // cannot write its own text (spaces, a fake status) into the request log.
        guard Self.isHostSyntax(request.head.authority ?? "localhost"),
            let parsed = TransportRequest(method: method, url: "http://" + (request.head.authority ?? "localhost") + target, headers: headers)
        else {
            let bad = TransportRequest(method: method, origin: "http://localhost", path: "/", headers: headers)
            return early(
                core.errorResponse(ServiceError(400, .invalidUri, "The request URI is not valid."), bad, service, UUID().uuidString.lowercased()), bad
            )
        }
        // The account's web host serves its static website (`$web`), on the Blob port.
        if service == .blob, let host = request.head.authority, StaticWebsite.names(host, account: core.configuration.accountName) {
            var web = parsed
            web.headers[VirtualHost.marker] = nil
            switch await core.website(web) {
            case .response(let response): return Self.response(response)
            case .streamed(let response, let blob): return Self.response(response, streaming: blob)
            case .dropConnection:
                context.channel.close(promise: nil)
                throw CancellationError()
            }
        }
        // An account in the host name is served as its path-style twin (``VirtualHost``).
        var azureRequest = VirtualHost.pathStyle(parsed, account: core.configuration.accountName, service: service)
        // The secondary of a geo-redundant account only reads.
        if VirtualHost.isSecondaryWrite(parsed, account: core.configuration.accountName) {
            let refusal = ServiceError(
                403, .insufficientAccountPermissions,
                "Write operations are not allowed. The secondary location of the account is read-only: write to the primary location.")
            return early(core.errorResponse(refusal, azureRequest, service, UUID().uuidString.lowercased()), azureRequest)
        }
        let limit = core.maxBodyBytes(service)
        if let length = headers["Content-Length"].flatMap(Int.init), length > limit {
            return early(core.bodyTooLarge(azureRequest, service: service), azureRequest)
        }
        let reply: EmulatorReply
        if Self.streamsUpload(azureRequest, service: service) {
            // Put Blob and Put Block bodies go to the byte store as they arrive: memory per
            // upload is one network chunk, whatever the body's size. Nothing reaches the disk
            // before the request's signature is checked.
            if let refusal = await core.refusalBeforeBody(azureRequest, service: service) { return early(refusal, azureRequest) }
            let staged: StagedUpload?
            do {
                staged = try await stage(request.body, channel: context.channel, limit: limit, structured: try StructuredMessage.upload(azureRequest))
            } catch let error as ServiceError {
                return early(core.errorResponse(error, azureRequest, service, UUID().uuidString.lowercased()), azureRequest)
            }
            guard let upload = staged else {
                return early(core.bodyTooLarge(azureRequest, service: service), azureRequest)
            }
            reply = await core.respond(azureRequest, service: service, upload: upload)
        } else {
            // A body is read only from a caller whose signature holds (checked from the headers,
            // which is all Shared Key, SAS and bearer tokens sign), and only within the budget of
            // bytes buffered across all connections.
            if method != "OPTIONS", Self.mayHaveBody(headers), let refusal = await core.refusalBeforeBody(azureRequest, service: service) {
                return early(refusal, azureRequest)
            }
            var body = ByteBuffer()
            defer { core.bufferBudget.give(body.readableBytes) }
            // A CORS preflight carries no body and is answered without credentials: whatever an
            // anonymous caller sends with one is never buffered (nor asked for); the server
            // discards it after the answer.
            if method == "OPTIONS" {
                return try Self.reply(await core.respond(azureRequest, service: service), context: context)
            }
            await ExpectContinue.bodyWanted(on: context.channel)
            for try await chunk in request.body {
                guard body.readableBytes + chunk.readableBytes <= limit else {
                    return early(core.bodyTooLarge(azureRequest, service: service), azureRequest)
                }
                guard core.bufferBudget.take(chunk.readableBytes) else {
                    return early(core.serverBusy(azureRequest, service: service), azureRequest)
                }
                var chunk = chunk
                body.writeBuffer(&chunk)
            }
            azureRequest.body = Data(body.readableBytesView)
            reply = await core.respond(azureRequest, service: service)
        }
        return try Self.reply(reply, context: context)
    }

    /// The HTTP response for a reply (or the connection dropped, for an injected fault).
    static func reply(_ reply: EmulatorReply, context: Context) throws -> Response {
        switch reply {
        case .response(let response):
            return Self.response(response)
        case .streamed(let response, let blob):
            return Self.response(response, streaming: blob)
        case .dropConnection:
            context.channel.close(promise: nil)
            throw CancellationError()
        }
    }

    /// Whether the request announces a body: a non-zero Content-Length, or chunked encoding.
    static func mayHaveBody(_ headers: HeaderFields) -> Bool {
        if let length = headers["Content-Length"] { return length != "0" }
        return headers["Transfer-Encoding"] != nil
    }

    /// Put Blob and Put Block: the requests whose bodies are blob bytes.
    /// Letters, digits and `.-_:[]` (names, IPv4, bracketed IPv6, a port): nothing that can
    /// change what a log line says.
    static func isHostSyntax(_ authority: String) -> Bool {
        !authority.isEmpty && authority.utf8.count <= 300
            && authority.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x2D || b == 0x5F || b == 0x3A
                    || b == 0x5B || b == 0x5D
            }
    }

    static func streamsUpload(_ request: TransportRequest, service: EmulatorServiceKind) -> Bool {
        guard service == .blob, request.method == "PUT", request.headers["x-ms-copy-source"] == nil else { return false }
        let comp = request.query.first { $0.name == "comp" }?.value
        guard comp == nil || comp == "block" || comp == "page" || comp == "appendblock" else { return false }
        // /account/container/blob: a blob, not a container.
        let parts = request.path.drop { $0 == "/" }.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count == 3 && !parts[1].isEmpty && !parts[2].isEmpty && !request.query.contains { $0.name == "restype" }
    }

    /// Writes the body into the byte store chunk by chunk (on the blocking-I/O threads),
    /// hashing it on the way; nil when it grows past `limit` (what was written is dropped).
    /// A structured message is decoded on the way: its content is what is stored and hashed,
    /// every CRC64 checked before the upload exists.
    private func stage(_ body: RequestBody, channel: any Channel, limit: Int, structured: (StructuredMessage.Decoder, Int)? = nil) async throws
        -> StagedUpload?
    {
        let bytes = core.store.bytes
        let writer = try await BlockingPool.run { try bytes.makeWriter() }
        await ExpectContinue.bodyWanted(on: channel)
        var md5 = Insecure.MD5()
        var crc = Crc64()
        var size = 0
        var decoder = structured?.0
        do {
            for try await chunk in body {
                size += chunk.readableBytes
                guard size <= limit else {
                    _ = try? await BlockingPool.run { writer.discard() }
                    return nil
                }
                let content: ByteBuffer
                if decoder != nil {
                    var decoded = ByteBuffer()
                    try chunk.withUnsafeReadableBytes { raw in try decoder!.feed(raw) { decoded.writeBytes($0) } }
                    content = decoded
                } else {
                    content = chunk
                }
                content.withUnsafeReadableBytes {
                    md5.update(bufferPointer: $0)
                    crc.update($0)
                }
                try await BlockingPool.run { try content.withUnsafeReadableBytes { try writer.append($0) } }
            }
            if let decoder, let expected = structured?.1 {
                try decoder.finish()
                guard decoder.contentLength == expected else {
                    throw StructuredMessage.invalid("it holds \(decoder.contentLength) bytes, x-ms-structured-content-length says \(expected)")
                }
                size = decoder.contentLength
            }
            let id = try await BlockingPool.run { try writer.finish() }
            return StagedUpload(id: id, size: size, md5: Data(md5.finalize()).base64EncodedString(), crc64: crc.base64)
        } catch {
            _ = try? await BlockingPool.run { writer.discard() }
            throw error
        }
    }

    /// A response whose body is a blob read from disk piece by piece.
    static func response(_ response: TransportResponse, streaming blob: BlobBody) -> Response {
        var shaped = Self.response(response)
        shaped.body = ResponseBody(contentLength: blob.wireLength) { writer in
            try await blob.stream { piece in try await writer.write(ByteBuffer(bytes: piece)) }
            try await writer.finish(nil)
        }
        return shaped
    }

    static func response(_ response: TransportResponse) -> Response {
        var fields = HTTPFields()
        for (name, value) in response.headers.fields {
            if let n = HTTPField.Name(name) { fields.append(HTTPField(name: n, value: value)) }
        }
        let body = response.body.isEmpty ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: response.body))
        return Response(status: .init(code: response.status), headers: fields, body: body)
    }
}
