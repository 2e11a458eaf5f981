import CCurl
import Foundation
import Synchronization

/// One request on the loop: what goes out (headers, a body libcurl may rewind to resend on a
/// fresh connection), what comes back, and the continuation waiting for it.
///
/// Everything but `state` is touched only by `CurlEventLoop`'s thread, which owns the
/// transfer from `configure` to `finish`; `state` is how the waiting task and a cancellation
/// meet it.
final class CurlTransfer: @unchecked Sendable {
    private let request: TransportRequest
    private let timeout: Int
    /// Only open a connection (a reachability probe), with this connect timeout in seconds.
    private let connectOnly: Int?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var upload: UnsafeMutableRawBufferPointer?
    private var errorBuffer: UnsafeMutablePointer<CChar>?
    private var responseHeaders = HeaderFields()
    private var responseBody = Data()
    /// Bounds on an untrusted far end (nil: the per-attempt stall timeout alone).
    private let limits: TransferLimits?
    /// Set when the body reached ``TransferLimits/maxBodyBytes`` and reading stopped there.
    private var cut = false
    /// Bytes moved so far and when that last changed (the stall check; loop thread only).
    private var progressed: Int64 = -1
    private var lastProgress = ContinuousClock.now
    /// Set when no byte moved for `timeout` seconds, or too few over a window, and the
    /// transfer was stopped for it.
    private var stalled = false
    private var tooSlow = false
    /// The slow-transfer window: when it began and the bytes moved by then.
    private var windowStart = ContinuousClock.now
    private var windowBytes: Int64 = 0

    /// A transfer moving fewer bytes a second than this, over a window of one timeout (at
    /// least 5 s), is stopped: a service trickling an answer cannot hold a command.
    static let minimumBytesPerSecond: Int64 = 4096

    /// Called by libcurl's progress callback: false stops the transfer as stalled or too slow.
    fileprivate func progress(_ bytes: Int64) -> Bool {
        let now = ContinuousClock.now
        if progressed < 0 { windowStart = now }
        if bytes != progressed {
            progressed = bytes
            lastProgress = now
        } else if now - lastProgress >= .seconds(timeout) {
            stalled = true
            return false
        }
        let window = Int64(max(5, timeout))
        if now - windowStart >= .seconds(window) {
            guard bytes - windowBytes >= Self.minimumBytesPerSecond * window else {
                tooSlow = true
                return false
            }
            windowStart = now
            windowBytes = bytes
        }
        return true
    }

    /// Set when the connection led to an address ``TransferLimits/publicAddressesOnly`` refuses.
    fileprivate var refusedAddress = false

    private struct State {
        var continuation: CheckedContinuation<TransportResponse, any Error>?
        var finished = false
    }
    private let state = Mutex(State())

    /// Extra trusted CA certificates (PEM), added to the system's.
    private let trustedCertificates: String?

    init(_ request: TransportRequest, timeout: Int, connectOnly: Int? = nil, trustedCertificates: String? = nil, limits: TransferLimits? = nil) {
        self.trustedCertificates = trustedCertificates
        self.limits = limits
        self.request = request
        self.timeout = timeout
        self.connectOnly = connectOnly
    }

    /// Set by the waiting task before the transfer is started.
    func waitWith(_ continuation: CheckedContinuation<TransportResponse, any Error>) {
        let early = state.withLock { state -> Bool in
            guard !state.finished else { return true }
            state.continuation = continuation
            return false
        }
        if early { continuation.resume(throwing: CancellationError()) }
    }

    /// False once finished (a cancellation that arrived before the start).
    var isPending: Bool { state.withLock { !$0.finished } }

    /// Resumes the waiting task once; later calls do nothing.
    func finish(_ result: Result<TransportResponse, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<TransportResponse, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }

    /// Frees what libcurl pointed at; called once the handle left the multi.
    func release() {
        curl_slist_free_all(headerList)
        headerList = nil
        upload?.deallocate()
        upload = nil
        errorBuffer?.deallocate()
        errorBuffer = nil
    }

    /// Sets the handle's options for this request.
    func configure(_ easy: UnsafeMutableRawPointer) {
        var hasContentType = false
        for (name, value) in request.headers {
            if HeaderFields.sameName(name, "Content-Type") { hasContentType = true }
            // `Name;` is libcurl's way to send a header with an empty value.
            headerList = curl_slist_append(headerList, value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        // libcurl would add these on its own: a form Content-Type on bodies (it would break
        // the signature) and `Expect: 100-continue` on large ones.
        if !hasContentType { headerList = curl_slist_append(headerList, "Content-Type:") }
        headerList = curl_slist_append(headerList, "Expect:")

        let errors = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errors.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer = errors
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = azs_curl_setopt_pointer(easy, CURLOPT_URL, request.urlString)
        _ = azs_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = azs_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT, connectOnly ?? 10)
        if let trustedCertificates {
            // CAINFO alone would replace the system's roots; CAPATH keeps them (libcurl copies
            // both strings).
            _ = azs_curl_setopt_pointer(easy, CURLOPT_CAINFO, trustedCertificates)
            _ = azs_curl_setopt_pointer(easy, CURLOPT_CAPATH, "/etc/ssl/certs")
        }
        if connectOnly != nil {
            _ = azs_curl_setopt_long(easy, CURLOPT_CONNECT_ONLY, 1)
            _ = azs_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errors)
            return
        }
        // Per attempt, a stall — not a slow transfer — fails it: no byte sent or received for
        // `timeout` s, measured from the last byte (libcurl's low-speed check averages over
        // its window, so a burst before a stall would let it run on for seconds more).
        _ = azs_curl_setopt_long(easy, CURLOPT_NOPROGRESS, 0)
        _ = azs_curl_setopt_xferinfo(easy, curlProgressCallback)
        _ = azs_curl_setopt_pointer(easy, CURLOPT_XFERINFODATA, context)
        if let limits {
            // An untrusted far end: a whole-transfer deadline and a minimum rate, never redirects
            // (libcurl's default, restated), and optionally public addresses only.
            _ = azs_curl_setopt_long(easy, CURLOPT_TIMEOUT, limits.deadline)
            _ = azs_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT, min(10, limits.deadline))
            _ = azs_curl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, limits.minimumBytesPerSecond)
            _ = azs_curl_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, limits.slowWindow)
            _ = azs_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0)
            if limits.publicAddressesOnly {
                _ = azs_curl_setopt_prereq(easy, curlPrereqCallback)
                _ = azs_curl_setopt_pointer(easy, CURLOPT_PREREQDATA, context)
            }
        }
        _ = azs_curl_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
        _ = azs_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errors)
        _ = azs_curl_setopt_pointer(easy, CURLOPT_HTTPHEADER, headerList)
        _ = azs_curl_setopt_callback(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback)
        _ = azs_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, context)
        _ = azs_curl_setopt_callback(easy, CURLOPT_WRITEFUNCTION, curlBodyCallback)
        _ = azs_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, context)
        switch request.method {
        case "GET": break
        case "HEAD": _ = azs_curl_setopt_long(easy, CURLOPT_NOBODY, 1)
        default:
            if !request.body.isEmpty || ["PUT", "POST", "MERGE", "PATCH"].contains(request.method) {
                // libcurl reads the body from a copy that lives until `release`, so it can
                // rewind it for a resend on a fresh connection.
                let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, request.body.count), alignment: 1)
                request.body.copyBytes(to: bytes)
                upload = bytes
                _ = azs_curl_setopt_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
                _ = azs_curl_setopt_pointer(easy, CURLOPT_POSTFIELDS, bytes.baseAddress)
            }
            _ = azs_curl_setopt_pointer(easy, CURLOPT_CUSTOMREQUEST, request.method)
        }
    }

    /// The response, or why there is none, once libcurl reports the transfer done.
    func result(code: CURLcode, easy: UnsafeMutableRawPointer) -> Result<TransportResponse, any Error> {
        if code == CURLE_WRITE_ERROR, cut {
            // Reading stopped at the limit on purpose: the response is what came before it.
            var status = 0
            _ = azs_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            return .success(TransportResponse(status: status, headers: responseHeaders, body: responseBody))
        }
        if stalled {
            return .failure(
                CurlError(
                    CURLE_OPERATION_TIMEDOUT,
                    message: progressed > 0
                        ? "the answer stopped: no byte for \(timeout) s"
                        : "no answer within \(timeout) s (the connection was accepted, then nothing came)"))
        }
        if tooSlow {
            return .failure(
                CurlError(
                    CURLE_OPERATION_TIMEDOUT, message: "the service sent under \(Self.minimumBytesPerSecond >> 10) KiB/s for \(max(5, timeout)) s"))
        }
        if refusedAddress { return .failure(CurlError(message: "the address it resolves to is not public (loopback, private or link-local)")) }
        guard code == CURLE_OK else {
            let detail = errorBuffer.map { String(cString: $0) } ?? ""
            return .failure(CurlError(code, detail: detail))
        }
        var status = 0
        _ = azs_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return .success(TransportResponse(status: status, headers: responseHeaders, body: responseBody))
    }

    /// One header line; a status line starts a new response (after `100 Continue`, or when
    /// libcurl resends on a fresh connection).
    fileprivate func header(_ line: UnsafeBufferPointer<UInt8>) {
        var text = Substring(String(decoding: line, as: UTF8.self))
        while let last = text.last, last.isNewline { text = text.dropLast() }  // "\r\n" is one Character
        if text.hasPrefix("HTTP/") {
            responseHeaders = HeaderFields()
            responseBody = Data()
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return }
        let name = String(text[..<colon])
        let value = HeaderFields.trimmed(text[text.index(after: colon)...])
        responseHeaders.append(name, value)
        // The body's room made once: grown by doubling, an 8 MiB range was copied about twice
        // over on its way in. Bounded by what this transfer keeps, and by 64 MiB: the far end
        // states the length, so it must not size an allocation.
        if request.method != "HEAD", name.utf8.count == 14, name.lowercased() == "content-length", let length = Int(value), length > 0 {
            responseBody.reserveCapacity(min(length, limits?.maxBodyBytes ?? length, 64 << 20))
        }
    }

    /// Keeps body bytes up to the limit; false (stop reading) once it is reached.
    fileprivate func append(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let limit = limits?.maxBodyBytes else {
            responseBody.append(data)
            return true
        }
        let room = max(0, limit - responseBody.count)
        responseBody.append(UnsafeBufferPointer(rebasing: data.prefix(room)))
        if data.count > room { cut = true }
        return data.count <= room
    }
}

private let curlProgressCallback: curl_xferinfo_callback = { context, downloadTotal, downloaded, uploadTotal, uploaded in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.progress(Int64(downloaded) + Int64(uploaded)) ? 0 : 1
}

private let curlPrereqCallback: curl_prereq_callback = { context, primaryIP, _, _, _ in
    guard let context, let primaryIP else { return Int32(CURL_PREREQFUNC_ABORT) }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    guard TransferLimits.isPublic(String(cString: primaryIP)) else {
        transfer.refusedAddress = true
        return Int32(CURL_PREREQFUNC_ABORT)
    }
    return Int32(CURL_PREREQFUNC_OK)
}

private let curlHeaderCallback: azs_curl_data_callback = { data, size, count, context in
    deliver(data, size * count, context) {
        $0.header($1)
        return true
    }
}

private let curlBodyCallback: azs_curl_data_callback = { data, size, count, context in
    deliver(data, size * count, context) { $0.append($1) }
}

/// Hands a callback's bytes to the transfer behind `context`; returns the count consumed.
private func deliver(
    _ data: UnsafeMutablePointer<CChar>?, _ length: Int, _ context: UnsafeMutableRawPointer?,
    _ body: (CurlTransfer, UnsafeBufferPointer<UInt8>) -> Bool
) -> Int {
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let keep = data.withMemoryRebound(to: UInt8.self, capacity: length) { body(transfer, UnsafeBufferPointer(start: $0, count: length)) }
    // Fewer bytes than given tell libcurl to stop (CURLE_WRITE_ERROR): the limit was reached.
    return keep ? length : 0
}
