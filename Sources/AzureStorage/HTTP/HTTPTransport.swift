import Foundation

/// The one seam between the client and the network: tests swap in a fake.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// A transport backed by a closure (for tests).
public struct ClosureTransport: HTTPTransport {
    let handler: @Sendable (HTTPRequest) async throws -> HTTPResponse
    public init(_ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) { self.handler = handler }
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse { try await handler(request) }
}
