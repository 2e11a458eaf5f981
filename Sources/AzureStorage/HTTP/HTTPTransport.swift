import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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

/// The real transport: Foundation's URLSession (libcurl on Linux), one shared session so
/// connections are reused. Bodies are sent as data with a Content-Length, never chunked.
public final class URLSessionTransport: HTTPTransport {
    let session: URLSession

    /// - Parameter timeout: seconds without progress before a request fails.
    public init(timeout: TimeInterval = 30, maxConnectionsPerHost: Int = 16) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = max(timeout * 10, 300)
        configuration.httpMaximumConnectionsPerHost = maxConnectionsPerHost
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        session = URLSession(configuration: configuration)
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let url = URL(string: request.urlString) else {
            throw AzureStorageError(kind: .invalidRequest, operation: request.method, url: request.displayURL, message: "not a valid URL")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty || ["PUT", "POST", "MERGE", "PATCH"].contains(request.method) {
            urlRequest.httpBody = request.body
        }
        let (data, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else {
            throw AzureStorageError(kind: .invalidResponse, operation: request.method, url: request.displayURL, message: "not an HTTP response")
        }
        var headers = HTTPHeaders()
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: data)
    }
}
