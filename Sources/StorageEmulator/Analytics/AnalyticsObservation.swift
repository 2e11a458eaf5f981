import Foundation
import StorageProtocol
import Synchronization

/// How a request's credentials held, as the core found when it authenticated the request (not
/// what headers it carried: a bogus `Authorization` proves nothing). Storage Analytics classes
/// requests by it.
final class ProvenCredentials: Sendable {
    @TaskLocal static var current: ProvenCredentials?
    /// 0: none held (anonymous), 1: a key or a token, 2: a SAS.
    private let kind = Atomic<UInt8>(0)

    func mark(_ caller: Caller) {
        switch caller {
        case .anonymous: break
        case .sas: kind.store(2, ordering: .relaxed)
        default: kind.store(1, ordering: .relaxed)
        }
    }

    var authentication: StorageAnalytics.Authentication {
        switch kind.load(ordering: .relaxed) {
        case 1: .authenticated
        case 2: .sas
        default: .anonymous
        }
    }
}

/// Builds the observation Storage Analytics records for an answered request. The URL is the
/// one the request log shows (a SAS's signature redacted); no credential is ever recorded.
enum AnalyticsObservation {
    static func make(
        _ request: TransportRequest, service: EmulatorServiceKind, reply: EmulatorReply, requestBytes: Int, started: ContinuousClock.Instant,
        client: String?, authentication: StorageAnalytics.Authentication
    ) -> StorageAnalytics.Observation {
        let elapsed = ContinuousClock.now - started
        let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        var status = 0
        var responseBytes = 0
        var headers = HeaderFields()
        switch reply {
        case .response(let response):
            status = response.status
            responseBytes = response.body.count
            headers = response.headers
        case .streamed(let response, let body):
            status = response.status
            responseBytes = body.length
            headers = response.headers
        case .dropConnection:
            status = 500
        }
        let conditions = ["If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "x-ms-if-tags"].compactMap { name in
            request.headers[name].map { "\(name)=\($0)" }
        }
        return StorageAnalytics.Observation(
            service: service, operation: StorageOperation(request, service: service), status: status, authentication: authentication,
            start: EdmDateTime(ticks: ServerClock.wallClock().ticks - Int64(milliseconds) * 10_000), milliseconds: milliseconds,
            url: RequestLog.displayURL(request), objectKey: request.path.removingPercentEncoding ?? request.path,
            requestID: headers["x-ms-request-id"] ?? "", client: client ?? "", version: request.headers["x-ms-version"] ?? "",
            requestBytes: requestBytes, responseBytes: responseBytes, contentMD5: request.headers["Content-MD5"] ?? "",
            etag: headers["ETag"] ?? "", lastModified: headers["Last-Modified"] ?? "", conditions: conditions.joined(separator: ";"),
            userAgent: request.headers["User-Agent"] ?? "", referrer: request.headers["Referer"] ?? "",
            clientRequestID: request.headers["x-ms-client-request-id"] ?? "")
    }
}
