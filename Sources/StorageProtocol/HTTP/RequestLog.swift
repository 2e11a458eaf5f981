import Foundation
import Synchronization

/// One attempt of one request, as the request log shows it.
public struct RequestRecord: Sendable {
    /// The operation, such as "Put Blob".
    public var operation: String
    public var method: String
    /// The URL with every secret query value (`sig`, a SAS's signature) replaced by `redacted`.
    public var url: String
    /// nil when no answer came (a transport error).
    public var status: Int?
    /// `x-ms-error-code`, or the transport error for an attempt that got no answer.
    public var errorCode: String?
    public var bytesSent: Int
    public var bytesReceived: Int
    public var seconds: Double
    /// 1 for the first attempt.
    public var attempt: Int
    /// Why the request is sent again (the status and code, or the transport error); nil when it is not.
    public var retryReason: String?

    /// Whether the service asked the client to slow down (503 ServerBusy, 429).
    public var throttled: Bool { status == 503 || status == 429 }

    public init(
        operation: String, method: String, url: String, status: Int?, errorCode: String?, bytesSent: Int, bytesReceived: Int, seconds: Double,
        attempt: Int, retryReason: String?
    ) {
        self.operation = operation
        self.method = method
        self.url = url
        self.status = status
        self.errorCode = errorCode
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.seconds = seconds
        self.attempt = attempt
        self.retryReason = retryReason
    }
}

/// Counts of what a client sent: every attempt, the retries among them and the throttled answers.
/// Shared by the clients of one run (through ``ClientConfiguration``), read for progress and summaries.
public final class RequestActivity: Sendable {
    private let counts = Mutex((requests: 0, retries: 0, throttled: 0, busy: 0))
    private let backoff = Mutex(0.0)

    public init() {}

    /// Attempts sent, retries (attempts after the first), throttled answers (503, 429) and busy
    /// ones (those and any 5xx: Azure's 500 OperationTimedOut asks for less too) so far.
    public var snapshot: (requests: Int, retries: Int, throttled: Int, busy: Int) { counts.withLock { $0 } }

    /// Seconds spent waiting before retries and before requests to a throttled partition, so far.
    public var backoffSeconds: Double { backoff.withLock { $0 } }

    /// Notes a wait before a retry or a throttled partition's next request.
    public func recordBackoff(_ seconds: Double) {
        backoff.withLock { $0 += seconds }
    }

    public func record(_ record: RequestRecord) {
        counts.withLock { c in
            c.requests += 1
            if record.attempt > 1 { c.retries += 1 }
            if record.throttled { c.throttled += 1 }
            if record.throttled || (record.status ?? 0) >= 500 { c.busy += 1 }
        }
    }
}

/// Where request records go: one line per attempt on stderr (`--verbose`) and one JSON object
/// per line appended to a file (`--log-file`). Lines are written by ``LineWriter``'s thread,
/// never on the caller's; each is one `write(2)`, so the file is flushed line by line.
public final class RequestLog: Sendable {
    private let stderr: Bool
    private let file: Int32?

    /// - Parameters:
    ///   - verbose: one readable line per attempt on stderr.
    ///   - file: a file opened for appending, the JSON lines' destination (see ``openAppending(_:)``).
    public init(verbose: Bool, file: Int32?) {
        stderr = verbose
        self.file = file
    }

    /// Opens `path` for appending (created if needed); throws a one-line reason.
    public static func openAppending(_ path: String) throws -> Int32 {
        func refuse(_ why: String) -> AzureStorageError {
            var error = AzureStorageError(kind: .invalidRequest, operation: "Open the log file", url: "", message: "\(path): \(why)")
            error.remedy = "check \(Setting.logFile)"
            return error
        }
        // Opened without blocking: a named pipe with no reader would otherwise hold the command
        // (or the emulator) at start for ever. Only a regular file or a device is a log.
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0o644)
        guard fd >= 0 else {
            if errno == ENXIO { throw refuse("is a named pipe; give a regular file") }
            throw refuse("cannot be opened for appending (\(String(cString: strerror(errno)))); check the folder exists and is writable")
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            close(fd)
            throw refuse("cannot be opened for appending (\(String(cString: strerror(errno))))")
        }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG || kind == S_IFCHR else {
            close(fd)
            throw refuse(kind == S_IFIFO ? "is a named pipe; give a regular file" : "is not a regular file; give a regular file")
        }
        // Writes block as usual from here (the line writer also copes with a full descriptor).
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    public func record(_ record: RequestRecord) {
        write(text: Self.text(record), json: Self.json(record))
    }

    /// Writes one record given as its text line (for `--verbose`) and its JSON object (for the file).
    /// A nil `json` goes to stderr only.
    public func write(text: @autoclosure () -> String, json: @autoclosure () -> [UInt8]?) {
        if stderr { LineWriter.shared.write(Array(text().utf8), to: STDERR_FILENO) }
        if let file, let line = json() { LineWriter.shared.write(line, to: file) }
    }

    /// `azseed: PUT https://…/speakers/a.jpg 201 5346 B sent 0 B received 12 ms attempt 1`
    static func text(_ r: RequestRecord) -> String {
        var line = "azseed: \(r.method) \(r.url)"
        // With no answer, the transport's reason is the status ("no answer within 10 s", "connection refused…").
        switch (r.status, r.errorCode) {
        // A code comes from the far end: escaped, so it cannot drive the terminal or break the line.
        case (let status?, let code?): line += " \(status) \(Printable.escaped(code, quotes: false))"
        case (let status?, nil): line += " \(status)"
        case (nil, let reason?): line += " \(Printable.escaped(reason, quotes: false))"
        case (nil, nil): line += " no answer"
        }
        line += " \(r.bytesSent) B sent \(r.bytesReceived) B received \(Int((r.seconds * 1000).rounded())) ms attempt \(r.attempt)"
        if let reason = r.retryReason { line += ", retrying: \(Printable.escaped(reason, quotes: false))" }
        return line + "\n"
    }

    static func json(_ r: RequestRecord) -> [UInt8] {
        var members: [(String, JSONValue)] = [
            ("time", .string(Self.timestamp())), ("operation", .string(r.operation)), ("method", .string(r.method)), ("url", .string(r.url)),
            ("status", r.status.map { .number(String($0)) } ?? .null), ("errorCode", r.errorCode.map { .string($0) } ?? .null),
            ("bytesSent", .number(String(r.bytesSent))), ("bytesReceived", .number(String(r.bytesReceived))),
            ("ms", .number(String(format: "%.1f", r.seconds * 1000))), ("attempt", .number(String(r.attempt))),
        ]
        members.append(("retry", r.retryReason.map { .string($0) } ?? .null))
        return Array((JSONValue.object(members).compact() + "\n").utf8)
    }

    public static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }

    /// The request's URL with secret query values redacted: a SAS's `sig` (the other SAS fields
    /// say what it grants, which is useful and not secret), and — since the emulator also logs
    /// and records copy sources that are any URL — the signatures, credentials and tokens of
    /// other services' presigned URLs (`X-Amz-Signature`, `X-Amz-Security-Token`,
    /// `X-Goog-Credential`, `token`, `key`…); user-info (`https://name:password@host`) too.
    public static func displayURL(_ request: TransportRequest) -> String {
        let query = request.query.map { ($0.name, isSecretParameter($0.name) ? "redacted" : $0.value) }
        var origin = request.origin
        if let schemeEnd = origin.range(of: "://"), let at = origin[schemeEnd.upperBound...].lastIndex(of: "@") {
            origin = String(origin[..<schemeEnd.upperBound]) + "redacted@" + origin[origin.index(after: at)...]
        }
        return TransportRequest(method: request.method, origin: origin, path: request.path, query: query).urlString
    }

    /// Whether a query parameter's value may be a credential, by its name (ASCII, any case).
    public static func isSecretParameter(_ name: String) -> Bool {
        let lower = name.lowercased()
        if ["sig", "key", "apikey", "api-key", "api_key", "code", "password", "passwd", "auth", "authorization"].contains(lower) { return true }
        return ["signature", "token", "secret", "credential"].contains { lower.contains($0) }
    }
}
