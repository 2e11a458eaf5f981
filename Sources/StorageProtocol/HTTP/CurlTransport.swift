import CCurl
import Foundation

/// The real transport: libcurl, driven through its multi interface by `CurlEventLoop` on a
/// thread of its own, so a request in flight blocks no shared thread. Connections are reused
/// per host from the loop's cache; cancelling the Swift task aborts its transfer.
///
/// libcurl was chosen over Foundation's URLSession (itself libcurl on Linux) because URLSession
/// hands libcurl a body it cannot rewind: when a kept-alive connection turned out dead under a
/// request with a body, libcurl's resend stalled until the request timeout (30 s). Here
/// libcurl owns a copy of the body and resends at once. Header names also go out exactly as
/// written (Foundation re-cased `x-ms-meta-*`).
public struct CurlTransport: HTTPTransport {
    private let timeout: Int
    private let trustedCertificates: String?

    /// - Parameters:
    ///   - timeout: seconds without a byte sent or received before an attempt fails.
    ///   - trustedCertificates: a PEM file of CA certificates trusted besides the system's
    ///     (a private CA, a local emulator's certificate); nil trusts the system's alone.
    public init(timeout: TimeInterval = 30, trustedCertificates: String? = nil) {
        self.timeout = max(1, Int(timeout.rounded(.up)))
        self.trustedCertificates = trustedCertificates
    }

    /// `SSL_CERT_FILE`, as OpenSSL and curl name the extra trusted roots.
    public static var environmentCertificates: String? {
        ProcessInfo.processInfo.environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await Self.run(CurlTransfer(request, timeout: timeout, trustedCertificates: trustedCertificates))
    }

    /// Sends a request to a far end that is not trusted, within `limits` (one attempt, never
    /// redirected): a body past ``TransferLimits/maxBodyBytes`` is cut there.
    public func send(_ request: TransportRequest, limits: TransferLimits) async throws -> TransportResponse {
        try await Self.run(CurlTransfer(request, timeout: timeout, trustedCertificates: trustedCertificates, limits: limits))
    }

    /// Why a probe could not open a connection: a short reason, and whether the endpoint
    /// answered but its TLS failed (then the reason says what to do about the certificate).
    public struct ProbeProblem: Sendable, CustomStringConvertible {
        public var reason: String
        /// The endpoint is reachable; its certificate or handshake is the problem.
        public var isTLS: Bool
        /// What to do about it, when that is a setting (trusting the server's CA).
        public var remedy: Phrase? = nil
        /// The reason and the remedy, its setting left for the program to spell.
        public var phrase: Phrase { Phrase(verbatim: reason) + (remedy.map { "; \($0)" } ?? "") }
        public var description: String { phrase.description }
    }

    /// Opens a connection to `origin` (`scheme://host:port`) and drops it, on the loop like any
    /// transfer — for https that includes the TLS handshake: nil when it opened, else why not
    /// ("connection refused", "no answer within 5 s", "the host name does not resolve", a TLS
    /// failure). Name resolution is libcurl's threaded resolver, so this too blocks no shared
    /// thread. Throws only `CancellationError`.
    public static func probe(origin: String, timeout: Int, trustedCertificates: String? = nil) async throws -> ProbeProblem? {
        let request = TransportRequest(method: "GET", origin: origin, path: "/")
        do {
            _ = try await run(CurlTransfer(request, timeout: timeout, connectOnly: max(1, timeout), trustedCertificates: trustedCertificates))
            return nil
        } catch let error as CurlError {
            switch error.code {
            case CURLE_COULDNT_CONNECT: return ProbeProblem(reason: "connection refused or the host unreachable", isTLS: false)
            case CURLE_COULDNT_RESOLVE_HOST: return ProbeProblem(reason: "the host name does not resolve", isTLS: false)
            case CURLE_OPERATION_TIMEDOUT: return ProbeProblem(reason: "no answer within \(timeout) s", isTLS: false)
            case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CONNECT_ERROR:
                return ProbeProblem(reason: error.message, isTLS: true, remedy: error.remedy)
            default: return ProbeProblem(reason: error.message, isTLS: false)
            }
        } catch {
            throw error  // CancellationError: the task was cancelled, not the endpoint unreachable
        }
    }

    private static func run(_ transfer: CurlTransfer) async throws -> TransportResponse {
        try Task.checkCancellation()
        let loop = CurlEventLoop.shared
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.waitWith(continuation)
                loop.start(transfer)
            }
        } onCancel: {
            loop.cancel(transfer)
        }
    }
}

/// Why libcurl could not complete a request (no URL with secrets: the caller names it).
public struct CurlError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// What to do about it, when that is a setting the caller can change.
    public var remedy: Phrase?
    public var description: String { message + (remedy.map { "; \($0)" } ?? "") }
    let code: CURLcode?
    /// The transfer ran past its deadline (CURLE_OPERATION_TIMEDOUT), which the pipeline retries.
    public var timedOut: Bool { code == CURLE_OPERATION_TIMEDOUT }

    init(message: String) {
        self.message = message
        code = nil
    }

    init(_ code: CURLcode, message: String) {
        self.code = code
        self.message = message
    }

    init(_ code: CURLcode, detail: String) {
        self.code = code
        switch code {
        case CURLE_COULDNT_CONNECT: message = "connection refused"
        case CURLE_COULDNT_RESOLVE_HOST: message = "the host name does not resolve"
        case CURLE_OPERATION_TIMEDOUT: message = "timed out waiting for the service"
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE: message = "the connection was dropped"
        case CURLE_PEER_FAILED_VERIFICATION:
            message = "the server's TLS certificate is not trusted (\(detail))"
            remedy = "pass \(Setting.trustedCertificates) with the PEM of the CA that signed it"
        case CURLE_SSL_CACERT_BADFILE:
            message = "the trusted-certificates file cannot be read as PEM"
            remedy = "check \(Setting.trustedCertificates)"
        case CURLE_SSL_CONNECT_ERROR: message = "the TLS handshake failed" + (detail.isEmpty ? "" : ": \(detail)")
        default: message = "network error \(code.rawValue)" + (detail.isEmpty ? "" : ": \(detail)")
        }
    }
}
