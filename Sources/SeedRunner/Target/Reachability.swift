import AzureStorage
import Foundation

/// A connect (TCP, plus TLS for https) to each endpoint before the first request, so an endpoint that does not
/// answer fails in seconds with one clear line instead of after every retry's timeout.
/// The connects run on the transport's event loop (`CurlTransport.probe`): waiting for an
/// answer holds no thread.
public enum Reachability {
    /// Throws a ``RunError`` naming the first endpoint that cannot be connected to within
    /// `timeout` seconds; rethrows `CancellationError` when the task is cancelled.
    /// `trustedCertificates`: as the clients' (``ClientConfiguration/trustedCertificates``).
    public static func check(_ endpoints: [URL], timeout: Int = 5, trustedCertificates: String? = nil) async throws {
        var seen: Set<String> = []
        for url in endpoints {
            guard let host = url.host else { continue }
            let scheme = url.scheme ?? "https"
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            let origin = "\(scheme)://\(host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host):\(port)"
            guard seen.insert(origin).inserted else { continue }
            if let problem = try await CurlTransport.probe(origin: origin, timeout: timeout, trustedCertificates: trustedCertificates) {
                // A TLS problem says what to do itself; the endpoint is reachable.
                if problem.isTLS { throw RunError("\(origin): \(problem.phrase)") }
                throw RunError("cannot reach \(origin): \(problem); check the endpoint in the connection string and that the service is running")
            }
        }
    }
}
