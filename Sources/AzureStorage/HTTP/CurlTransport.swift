import CCurl
import Dispatch
import Foundation
import Synchronization

/// The real transport: libcurl's easy interface, one handle per request in flight, kept in a
/// pool so connections are reused.
///
/// Chosen over Foundation's URLSession (itself libcurl on Linux) because URLSession hands
/// libcurl a body it cannot rewind: when a kept-alive connection turned out dead under a
/// request with a body, libcurl's resend stalled until the request timeout (30 s). Here
/// libcurl owns a copy of the body and resends at once. Header names also go out exactly as
/// written (Foundation re-cased `x-ms-meta-*`).
public final class CurlTransport: HTTPTransport {
    private let idle = Mutex<[CurlHandle]>([])
    private let timeout: Int
    private let maxIdleHandles: Int
    private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// - Parameters:
    ///   - timeout: seconds without a byte sent or received before a request fails.
    ///   - maxConnectionsPerHost: how many idle connections are kept for reuse.
    public init(timeout: TimeInterval = 30, maxConnectionsPerHost: Int = 16) {
        _ = Self.globalInit
        self.timeout = max(1, Int(timeout.rounded(.up)))
        self.maxIdleHandles = max(1, maxConnectionsPerHost)
    }

    deinit {
        for handle in idle.withLock({ $0 }) { handle.close() }
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let handle = idle.withLock { $0.popLast() } ?? CurlHandle()
        let timeout = self.timeout
        // libcurl blocks while it works: off the cooperative pool, on a Dispatch thread.
        let result: Result<HTTPResponse, any Error> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { try handle.perform(request, timeout: timeout) })
            }
        }
        let kept = idle.withLock { handles -> Bool in
            guard handles.count < maxIdleHandles else { return false }
            handles.append(handle)
            return true
        }
        if !kept { handle.close() }
        return try result.get()
    }
}

/// Why libcurl could not complete a request (no URL with secrets: the caller names it).
public struct CurlError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    init(_ code: CURLcode, detail: String) {
        switch code {
        case CURLE_COULDNT_CONNECT: message = "connection refused; is the endpoint right and the service running?"
        case CURLE_COULDNT_RESOLVE_HOST: message = "the host name does not resolve"
        case CURLE_OPERATION_TIMEDOUT: message = "timed out waiting for the service"
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE: message = "the connection was dropped"
        default: message = "network error \(code.rawValue)" + (detail.isEmpty ? "" : ": \(detail)")
        }
    }
}

/// One libcurl easy handle and the response it is collecting. Used by one request at a time.
final class CurlHandle: @unchecked Sendable {
    private let easy: UnsafeMutableRawPointer
    private var headers = HTTPHeaders()
    private var body: [UInt8] = []

    init() {
        guard let easy = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        self.easy = easy
    }

    func close() { curl_easy_cleanup(easy) }

    func perform(_ request: HTTPRequest, timeout: Int) throws -> HTTPResponse {
        // Reset keeps the handle's live connections; only the options are cleared.
        curl_easy_reset(easy)
        headers = HTTPHeaders()
        body = []
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        var hasContentType = false
        for (name, value) in request.headers {
            if HTTPHeaders.sameName(name, "Content-Type") { hasContentType = true }
            // `Name;` is libcurl's way to send a header with an empty value.
            list = curl_slist_append(list, value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        // libcurl would add these on its own: a form Content-Type on bodies (it would break
        // the signature) and `Expect: 100-continue` on large ones.
        if !hasContentType { list = curl_slist_append(list, "Content-Type:") }
        list = curl_slist_append(list, "Expect:")

        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let code: CURLcode = request.body.withUnsafeBytes { bodyBytes in
            errorBuffer.withUnsafeMutableBufferPointer { errors in
                _ = azs_curl_setopt_pointer(easy, CURLOPT_URL, request.urlString)
                _ = azs_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
                _ = azs_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT, 10)
                // A stall, not a slow transfer, fails the request: under 1 byte/s for `timeout` s.
                _ = azs_curl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1)
                _ = azs_curl_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, timeout)
                _ = azs_curl_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
                _ = azs_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errors.baseAddress)
                _ = azs_curl_setopt_pointer(easy, CURLOPT_HTTPHEADER, list)
                _ = azs_curl_setopt_callback(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback)
                _ = azs_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, context)
                _ = azs_curl_setopt_callback(easy, CURLOPT_WRITEFUNCTION, curlBodyCallback)
                _ = azs_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, context)
                switch request.method {
                case "GET": break
                case "HEAD": _ = azs_curl_setopt_long(easy, CURLOPT_NOBODY, 1)
                default:
                    if !bodyBytes.isEmpty || ["PUT", "POST", "MERGE", "PATCH"].contains(request.method) {
                        // libcurl reads the body from our buffer (alive for the whole perform)
                        // and can rewind it for a resend on a fresh connection.
                        _ = azs_curl_setopt_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bodyBytes.count))
                        _ = azs_curl_setopt_pointer(easy, CURLOPT_POSTFIELDS, bodyBytes.isEmpty ? UnsafeRawPointer(emptyBody) : bodyBytes.baseAddress)
                    }
                    _ = azs_curl_setopt_pointer(easy, CURLOPT_CUSTOMREQUEST, request.method)
                }
                return curl_easy_perform(easy)
            }
        }
        guard code == CURLE_OK else {
            let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw CurlError(code, detail: detail)
        }
        var responseCode = 0
        _ = azs_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &responseCode)
        return HTTPResponse(status: responseCode, headers: headers, body: Data(body))
    }

    /// One header line; a status line starts a new response (after `100 Continue`, or when
    /// libcurl resends on a fresh connection).
    fileprivate func header(_ line: UnsafeBufferPointer<UInt8>) {
        var text = Substring(String(decoding: line, as: UTF8.self))
        while let last = text.last, last.isNewline { text = text.dropLast() }  // "\r\n" is one Character
        if text.hasPrefix("HTTP/") {
            headers = HTTPHeaders()
            body = []
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return }
        let name = String(text[..<colon])
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        headers.append(name, value)
    }

    fileprivate func append(_ data: UnsafeBufferPointer<UInt8>) { body.append(contentsOf: data) }
}

/// What an empty body points at (libcurl wants a pointer even for zero bytes).
nonisolated(unsafe) private let emptyBody = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

private let curlHeaderCallback: azs_curl_data_callback = { data, size, count, context in
    deliver(data, size * count, context) { $0.header($1) }
}

private let curlBodyCallback: azs_curl_data_callback = { data, size, count, context in
    deliver(data, size * count, context) { $0.append($1) }
}

/// Hands a callback's bytes to the handle behind `context`; returns the count consumed.
private func deliver(_ data: UnsafeMutablePointer<CChar>?, _ length: Int, _ context: UnsafeMutableRawPointer?,
                     _ body: (CurlHandle, UnsafeBufferPointer<UInt8>) -> Void) -> Int {
    guard let data, let context else { return 0 }
    let handle = Unmanaged<CurlHandle>.fromOpaque(context).takeUnretainedValue()
    data.withMemoryRebound(to: UInt8.self, capacity: length) { body(handle, UnsafeBufferPointer(start: $0, count: length)) }
    return length
}
