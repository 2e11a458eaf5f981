import Foundation
import StorageProtocol

/// One answered request, as the emulator's logger records it (``ServedRecord``: service,
/// method, URL with a SAS's signature redacted, status, error code, bytes in and out,
/// milliseconds, client address). The `Authorization` header is never logged.
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

    /// The record the request log writes.
    var record: ServedRecord {
        ServedRecord(
            service: service == .blob ? "blob" : "table", method: method, url: url, status: status, errorCode: errorCode, requestBytes: requestBytes,
            responseBytes: responseBytes, milliseconds: milliseconds, client: client)
    }
}
