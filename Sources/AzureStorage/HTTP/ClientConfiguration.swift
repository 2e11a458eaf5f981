import Foundation

/// Settings shared by the Blob and Table clients.
public struct ClientConfiguration: Sendable {
    public var retry: RetryPolicy
    /// Waits between retries (tests pass one that returns at once).
    public var sleep: Sleeper
    /// The clock that dates (and so signs) requests.
    public var now: @Sendable () -> Date
    /// Random values in [0, 1) for retry jitter.
    public var jitter: @Sendable () -> Double
    /// `x-ms-version` of Blob requests.
    public var blobVersion: String
    /// `x-ms-version` of Table requests.
    public var tableVersion: String

    public init(retry: RetryPolicy = .exponential,
                sleep: @escaping Sleeper = { try await Task.sleep(for: $0) },
                now: @escaping @Sendable () -> Date = { Date() },
                jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                blobVersion: String = "2023-11-03", tableVersion: String = "2019-02-02") {
        self.retry = retry
        self.sleep = sleep
        self.now = now
        self.jitter = jitter
        self.blobVersion = blobVersion
        self.tableVersion = tableVersion
    }
}

/// Sends signed requests with retries and turns failures into ``AzureStorageError``.
struct RequestPipeline: Sendable {
    enum Service { case blob, table }

    let account: StorageAccount
    let transport: any HTTPTransport
    let configuration: ClientConfiguration
    let service: Service

    /// The endpoint split into origin (`scheme://host:port`) and base path.
    var origin: String {
        let url = service == .blob ? account.blobEndpoint : account.tableEndpoint
        var s = "\(url.scheme ?? "https")://\(url.host ?? "")"
        if let port = url.port { s += ":\(port)" }
        return s
    }

    var basePath: String {
        let url = service == .blob ? account.blobEndpoint : account.tableEndpoint
        let path = url.path
        return path == "/" ? "" : path
    }

    /// A request to `basePath + path` (path already percent-encoded).
    func request(_ method: String, _ path: String, query: [(String, String)] = [], headers: HTTPHeaders = HTTPHeaders(), body: Data = Data()) -> HTTPRequest {
        HTTPRequest(method: method, origin: origin, path: basePath + path, query: query, headers: headers, body: body)
    }

    /// Sends `request`, retrying transient failures; returns a response whose status is in
    /// `expected`, else throws.
    func send(_ request: HTTPRequest, operation: String, expected: Set<Int>) async throws -> HTTPResponse {
        var attempt = 0
        while true {
            let failure: AzureStorageError
            var retryAfter: String?
            do {
                let response = try await transport.send(sign(request))
                if expected.contains(response.status) { return response }
                failure = .from(response, operation: operation, url: request.displayURL)
                retryAfter = response.headers["Retry-After"]
            } catch is CancellationError {
                throw CancellationError()
            } catch let error as AzureStorageError {
                throw error
            } catch {
                failure = AzureStorageError(kind: .transport, operation: operation, url: request.displayURL, message: Self.describe(error))
            }
            guard failure.isTransient, attempt < configuration.retry.maxRetries else { throw failure }
            attempt += 1
            try await configuration.sleep(configuration.retry.delay(attempt: attempt, retryAfter: retryAfter, unit: configuration.jitter()))
        }
    }

    /// Dates, versions and authorises a request.
    func sign(_ request: HTTPRequest) -> HTTPRequest {
        var r = request
        let date = SharedKeySigner.httpDate(configuration.now())
        r.headers["x-ms-date"] = date
        r.headers["x-ms-version"] = service == .blob ? configuration.blobVersion : configuration.tableVersion
        r.headers["Content-Length"] = String(r.body.count)
        if service == .table {
            r.headers["Date"] = date
            r.headers["DataServiceVersion"] = r.headers["DataServiceVersion"] ?? "3.0"
            r.headers["MaxDataServiceVersion"] = r.headers["MaxDataServiceVersion"] ?? "3.0;NetFx"
        }
        switch account.credential {
        case .sharedKey(let key):
            let signer = SharedKeySigner(account: account.name, key: key)
            r.headers["Authorization"] = service == .blob ? signer.blobAuthorization(r) : signer.tableAuthorization(r)
        case .sas(let token):
            r.query += token.parameters.map { (name: $0.0, value: $0.1) }
        case .anonymous:
            break
        }
        return r
    }

    /// A transport error as one readable line (never a URL with a query string).
    static func describe(_ error: Error) -> String {
        if let curl = error as? CurlError { return curl.message }
        return "\(type(of: error))"
    }
}
