import AzureStorage
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP connect to each endpoint before the first request, so an endpoint that does not
/// answer fails in seconds with one clear line instead of after every retry's timeout.
public enum Reachability {
    /// Throws a ``RunError`` naming the first endpoint that cannot be connected to within
    /// `timeout` seconds.
    public static func check(_ endpoints: [URL], timeout: Double = 5) throws(RunError) {
        var seen: Set<String> = []
        for url in endpoints {
            guard let host = url.host else { continue }
            let port = url.port ?? (url.scheme == "https" ? 443 : 80)
            guard seen.insert("\(host):\(port)").inserted else { continue }
            if let problem = connect(host: host, port: port, timeout: timeout) {
                throw RunError("cannot reach \(url.scheme ?? "https")://\(host):\(port): \(problem); check the endpoint in the connection string and that the service is running")
            }
        }
    }

    /// Nil when a connection opened; otherwise why not.
    static func connect(host: String, port: Int, timeout: Double) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), String(port), &hints, &list) == 0, let first = list else {
            return "the host name does not resolve"
        }
        defer { freeaddrinfo(list) }
        var reason = "no address to connect to"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return nil }
            guard errno == EINPROGRESS else {
                reason = describe(errno)
                continue
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, Int32(timeout * 1000))
            if ready == 0 {
                reason = "no answer within \(Int(timeout)) s"
                continue
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 { return nil }
            reason = describe(error)
        }
        return reason
    }

    private static func describe(_ code: Int32) -> String {
        switch code {
        case ECONNREFUSED: "connection refused"
        case ENETUNREACH, EHOSTUNREACH: "the network or host is unreachable"
        case ETIMEDOUT: "the connection timed out"
        default: String(cString: strerror(code))
        }
    }
}
