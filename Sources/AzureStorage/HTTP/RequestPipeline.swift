import Foundation

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
    func request(_ method: String, _ path: String, query: [(String, String)] = [], headers: HeaderFields = HeaderFields(), body: Data = Data())
        -> TransportRequest
    {
        TransportRequest(method: method, origin: origin, path: basePath + path, query: query, headers: headers, body: body)
    }

    /// Sends `request`, retrying transient failures; returns a response whose status is in
    /// `expected`, else throws.
    /// `partition` names the table partition a request writes (`table/PartitionKey`): throttled
    /// answers slow that partition's later requests (``PartitionThrottle``).
    func send(_ request: TransportRequest, operation: String, expected: Set<Int>, partition: String? = nil) async throws -> TransportResponse {
        // A header name or value with a line break or NUL would end the header and start
        // another (a dataset's metadata, a snapshot's, a copy source's): never sent.
        for (name, value) in request.headers {
            let bad = { (text: String) in text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } }
            if bad(name) || bad(value) {
                throw AzureStorageError(
                    kind: .invalidRequest, operation: operation, url: request.displayURL,
                    message: "header '\(Printable.escaped(name))' holds a line break or NUL, which no header can carry; nothing was sent")
            }
        }
        var attempt = 0
        let first = ContinuousClock.now
        while true {
            var stalled = false
            let failure: AzureStorageError
            var retryAfter: String?
            var record: RequestRecord?
            do {
                if let partition, let wait = configuration.throttle.admit(partition, now: configuration.now()) {
                    configuration.activity.recordBackoff(Self.seconds(wait))
                    try await configuration.sleep(wait)
                }
                let signed = sign(request, bearer: try await bearerToken())
                let started = ContinuousClock.now
                var sent = RequestRecord(
                    operation: operation, method: signed.method, url: RequestLog.displayURL(signed), status: nil, errorCode: nil,
                    bytesSent: signed.body.count, bytesReceived: 0, seconds: 0, attempt: attempt + 1, retryReason: nil)
                let response: TransportResponse
                do {
                    response = try await transport.send(signed)
                } catch let error where !(error is CancellationError) {
                    sent.seconds = Self.seconds(since: started)
                    sent.errorCode = Self.describe(error)
                    record = sent
                    throw error
                }
                sent.seconds = Self.seconds(since: started)
                sent.status = response.status
                sent.errorCode = response.headers["x-ms-error-code"]
                sent.bytesReceived = response.body.count
                record = sent
                if let partition {
                    configuration.throttle.record(partition, throttled: response.status == 503 || response.status == 429, now: configuration.now())
                }
                if expected.contains(response.status) {
                    observe(sent)
                    return response
                }
                failure = .from(response, operation: operation, url: request.displayURL)
                retryAfter = response.headers["Retry-After"]
            } catch is CancellationError {
                throw CancellationError()
            } catch let error as AzureStorageError {
                if let record { observe(record) }
                throw error
            } catch {
                stalled = (error as? CurlError)?.timedOut == true
                var transport = AzureStorageError(kind: .transport, operation: operation, url: request.displayURL, message: Self.describe(error))
                transport.remedy = stalled ? "raise \(Setting.timeout) if the service is only slow" : (error as? CurlError)?.remedy
                failure = transport
            }
            // A stall is not retried, and no retry starts past the request's retry window: a
            // silent or stalled service ends the command in about one timeout.
            let delay = configuration.retry.delay(attempt: attempt + 1, retryAfter: retryAfter, unit: configuration.jitter())
            let retrying =
                failure.isTransient && !stalled && attempt < configuration.retry.maxRetries
                && ContinuousClock.now - first + delay <= configuration.retryWindow
            if var record {
                if retrying {
                    record.retryReason =
                        record.status.map { "\($0) \(record.errorCode ?? "")".trimmingCharacters(in: .whitespaces) } ?? record.errorCode
                }
                observe(record)
            }
            guard retrying else { throw failure }
            attempt += 1
            configuration.activity.recordBackoff(Self.seconds(delay))
            try await configuration.sleep(delay)
        }
    }

    /// Counts the attempt and logs it (`--verbose`, `--log-file`).
    private func observe(_ record: RequestRecord) {
        configuration.activity.record(record)
        configuration.logger.info("\(record.method) \(record.operation)", metadata: record.metadata)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// A token for this attempt when the account signs in with Entra ID (cached by its
    /// source), nil otherwise. Refused before anything is sent over plain HTTP: a bearer
    /// token is a password for as long as it lives.
    func bearerToken() async throws -> AccessToken? {
        guard case .bearer(let source) = account.credential else { return nil }
        guard origin.lowercased().hasPrefix("https://") else {
            throw AzureStorageError(
                kind: .invalidRequest, operation: "Sign in", url: origin + basePath,
                message: "Bearer token authentication is only sent over HTTPS; use the https endpoint")
        }
        do { return try await source.token() } catch let error as CredentialUnavailable {
            throw AzureStorageError(kind: .credential, operation: "Get a token (\(source.credential.name))", url: "", message: error.description)
        }
    }

    /// Dates, versions and authorises a request.
    func sign(_ request: TransportRequest, bearer: AccessToken? = nil) -> TransportRequest {
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
        case .bearer:
            if let bearer { r.headers["Authorization"] = "Bearer \(bearer.token)" }
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
