import Foundation

/// The one seam between the client and the network: tests swap in a fake.
public protocol HTTPTransport: Sendable {
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// A transport backed by a closure (for tests).
public struct ClosureTransport: HTTPTransport {
    let handler: @Sendable (TransportRequest) async throws -> TransportResponse
    public init(_ handler: @escaping @Sendable (TransportRequest) async throws -> TransportResponse) { self.handler = handler }
    public func send(_ request: TransportRequest) async throws -> TransportResponse { try await handler(request) }
}
