import Foundation

/// Bounds on one transfer whose far end is not trusted (a copy source named by a client of the
/// emulator): how many body bytes are kept, how long the whole transfer may take, how slowly it
/// may go, and which addresses it may connect to. docs/SECURITY.md names who each bounds.
public struct TransferLimits: Sendable, Equatable {
    /// The most body bytes kept: past them the transfer stops reading and the response ends
    /// there (a source that ignores `Range`, or sends more than it announced, costs no more).
    public var maxBodyBytes: Int
    /// The whole transfer, connection included, in seconds.
    public var deadline: Int
    /// Below this many bytes a second for ``slowWindow`` seconds the transfer fails: a source
    /// dripping bytes cannot hold a request open.
    public var minimumBytesPerSecond: Int
    public var slowWindow: Int
    /// Connect only to public addresses: loopback, private, link-local, unspecified, multicast
    /// and carrier-grade NAT addresses are refused after name resolution, so a name that
    /// resolves to one (DNS rebinding included) reaches nothing on this machine or network.
    public var publicAddressesOnly: Bool

    public init(maxBodyBytes: Int, deadline: Int, minimumBytesPerSecond: Int, slowWindow: Int, publicAddressesOnly: Bool) {
        self.maxBodyBytes = maxBodyBytes
        self.deadline = deadline
        self.minimumBytesPerSecond = minimumBytesPerSecond
        self.slowWindow = slowWindow
        self.publicAddressesOnly = publicAddressesOnly
    }

    /// Whether `address` (as libcurl prints it: dotted IPv4 or IPv6 text) is one a copy may
    /// reach without an explicit allowance of its own.
    public static func isPublic(_ address: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            let b = withUnsafeBytes(of: v4.s_addr) { Array($0) }
            switch (b[0], b[1]) {
            case (0, _), (10, _), (127, _), (169, 254), (192, 168), (255, _): return false
            case (172, 16...31), (100, 64...127), (192, 0), (198, 18...19): return false
            case (224...239, _): return false
            default: return true
            }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return false }
        let b = withUnsafeBytes(of: v6) { Array($0) }
        if b[0..<15].allSatisfy({ $0 == 0 }) { return false }  // :: and ::1
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {
            return isPublic("\(b[12]).\(b[13]).\(b[14]).\(b[15])")  // IPv4-mapped
        }
        if b[0] == 0xFE && (b[1] & 0xC0) == 0x80 { return false }  // fe80::/10 link-local
        if (b[0] & 0xFE) == 0xFC { return false }  // fc00::/7 unique local
        if b[0] == 0xFF { return false }  // multicast
        return true
    }
}
