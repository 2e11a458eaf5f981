import AzureStorage
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

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

/// Hands each HTTP request to the emulator core as an `HTTPRequest` (the raw path as sent,
/// so signatures verify) and writes its reply back.
struct EmulatorResponder: HTTPResponder {
    typealias Context = EmulatorRequestContext
    let core: StorageEmulatorCore
    let service: EmulatorServiceKind

    func respond(to request: Request, context: Context) async throws -> Response {
        var headers = AzureStorage.HTTPHeaders()
        for field in request.headers { headers[field.name.rawName] = field.value }
        if let authority = request.head.authority { headers["Host"] = authority }
        let target = request.head.path ?? "/"
        let method = request.method.rawValue
        guard let parsed = AzureStorage.HTTPRequest(method: method, url: "http://" + (request.head.authority ?? "localhost") + target, headers: headers) else {
            let bad = AzureStorage.HTTPRequest(method: method, origin: "http://localhost", path: "/", headers: headers)
            return Self.response(core.errorResponse(ServiceError(400, "InvalidUri", "The request URI is not valid."), bad, service, UUID().uuidString.lowercased()))
        }
        var azureRequest = parsed
        let limit = core.maxBodyBytes(service)
        if let length = headers["Content-Length"].flatMap(Int.init), length > limit {
            return Self.response(core.bodyTooLarge(azureRequest, service: service))
        }
        var body = ByteBuffer()
        for try await chunk in request.body {
            guard body.readableBytes + chunk.readableBytes <= limit else {
                return Self.response(core.bodyTooLarge(azureRequest, service: service))
            }
            var chunk = chunk
            body.writeBuffer(&chunk)
        }
        azureRequest.body = Data(body.readableBytesView)
        switch await core.respond(azureRequest, service: service) {
        case .response(let response):
            return Self.response(response)
        case .dropConnection:
            context.channel.close(promise: nil)
            throw CancellationError()
        }
    }

    static func response(_ response: AzureStorage.HTTPResponse) -> Response {
        var fields = HTTPFields()
        for (name, value) in response.headers.fields {
            if let n = HTTPField.Name(name) { fields.append(HTTPField(name: n, value: value)) }
        }
        let body = response.body.isEmpty ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: response.body))
        return Response(status: .init(code: response.status), headers: fields, body: body)
    }
}
