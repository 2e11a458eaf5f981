import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// `Expect: 100-continue` (RFC 9110 §10.1.1), answered as Azure answers it: a client that sends
/// it (the Azure SDK for C++ on every body, curl on bodies over 1 KiB) waits for `100 Continue`
/// before it sends the body. The answer is sent when the responder starts to read the body
/// (``ExpectContinue/bodyWanted``), so a request refused on its headers (a bad signature, a body
/// over the limit) gets its final status with no body read and the connection closed after it
/// — the client never sends bytes nobody reads.
///
/// Sits in the pipeline between the HTTP codec and Hummingbird's connection handler. Requests
/// may be pipelined: a later request's head can arrive while an earlier one is still answered,
/// so each request read has its state in a queue, and answers (which go out in order) apply to
/// its front.
final class ExpectContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// One request read and not yet answered in full.
    private struct Pending {
        /// It expects `100 Continue` and has had neither that nor its final answer, and no
        /// byte of its body came unasked.
        var awaitingContinue: Bool
        /// Its final answer went out with the body unread: the connection closes after it.
        var closeAfterResponse = false
    }
    private var pending: [Pending] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): pending.append(Pending(awaitingContinue: Self.expectsContinue(head)))
        // A client that did not wait sends the body anyway; it needs no `100 Continue` then.
        case .body: if !pending.isEmpty { pending[pending.count - 1].awaitingContinue = false }
        case .end: break
        }
        context.fireChannelRead(data)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is ExpectContinue.BodyWanted else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        guard !pending.isEmpty, pending[0].awaitingContinue else {
            promise?.succeed()
            return
        }
        pending[0].awaitingContinue = false
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: promise)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.kind != .informational && pending.first?.awaitingContinue == true:
            // Refused before its body was asked for: the client may still send the body, or
            // never; either way the connection cannot carry another request.
            pending[0].awaitingContinue = false
            pending[0].closeAfterResponse = true
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            let close = pending.first?.closeAfterResponse == true
            if !pending.isEmpty { pending.removeFirst() }
            guard close else {
                context.write(data, promise: promise)
                return
            }
            let channel = context.channel
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            written.futureResult.cascade(to: promise)
            context.writeAndFlush(data, promise: written)
        default:
            context.write(data, promise: promise)
        }
    }

    /// `Expect: 100-continue`; the token is case-insensitive.
    static func expectsContinue(_ head: HTTPRequest) -> Bool {
        guard let value = head.headerFields[.expect] else { return false }
        return value.split(separator: ",").contains { $0.filter { $0 != " " && $0 != "\t" }.lowercased() == "100-continue" }
    }
}

/// What a responder sends down its channel before it reads a request's body.
enum ExpectContinue {
    /// The responder is about to read the body: answer `100 Continue` if the client waits for it.
    struct BodyWanted: Sendable {}

    /// Sends `100 Continue` when the request expects it; returns once it is written.
    static func bodyWanted(on channel: any Channel) async {
        try? await channel.triggerUserOutboundEvent(BodyWanted()).get()
    }
}
