import AzureStorage
import Foundation

/// One answered request, as `azseed emulator --log-file` records it: a JSON object per line
/// (time, service, method, URL with a SAS's signature redacted, status, error code, bytes in and
/// out, milliseconds, client address). The `Authorization` header is never logged.
struct ServedRequest {
    var service: EmulatorServiceKind
    var method: String
    var url: String
    /// nil when the connection was dropped (an injected fault).
    var status: Int?
    var errorCode: String?
    var requestBytes: Int
    var responseBytes: Int
    var milliseconds: Double
    var client: String?

    init(_ request: TransportRequest, service: EmulatorServiceKind, requestBytes: Int, reply: EmulatorReply, elapsed: Duration, client: String?) {
        self.service = service
        method = request.method
        url = RequestLog.displayURL(request)
        self.requestBytes = requestBytes
        switch reply {
        case .response(let response):
            status = response.status
            errorCode = response.headers["x-ms-error-code"]
            responseBytes = response.body.count
        case .streamed(let response, let body):
            status = response.status
            errorCode = response.headers["x-ms-error-code"]
            responseBytes = body.length
        case .dropConnection:
            status = nil
            responseBytes = 0
        }
        milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        self.client = client
    }

    func write(to log: RequestLog) {
        log.write(text: text, json: json)
    }

    var text: String {
        "azseed emulator: \(client ?? "-") \(method) \(url) \(status.map(String.init) ?? "dropped")\(errorCode.map { " \($0)" } ?? "") "
            + "\(requestBytes) B in \(responseBytes) B out \(Int(milliseconds.rounded())) ms\n"
    }

    var json: [UInt8] {
        let members: [(String, JSONValue)] = [
            ("time", .string(RequestLog.timestamp())), ("service", .string(service == .blob ? "blob" : "table")),
            ("method", .string(method)), ("url", .string(url)), ("status", status.map { .number(String($0)) } ?? .null),
            ("errorCode", errorCode.map { .string($0) } ?? .null), ("requestBytes", .number(String(requestBytes))),
            ("responseBytes", .number(String(responseBytes))), ("ms", .number(String(format: "%.1f", milliseconds))),
            ("client", client.map { .string($0) } ?? .null),
        ]
        return Array((JSONValue.object(members).compact() + "\n").utf8)
    }
}
