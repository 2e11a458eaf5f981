import Foundation
import StorageProtocol

/// An origin the emulator may read copy sources from (`azseed emulator --allow-copy-source`):
/// `scheme://host[:port]`, or `scheme://*.domain[:port]` for every host under a domain.
///
/// By default the emulator reads no source outside its own account: a client holding only a
/// write grant must not make it fetch what that client cannot reach itself (docs/SECURITY.md,
/// "a remote copy source"). A named host is trusted whatever it resolves to, loopback
/// included; hosts matched by a wildcard are reached only at public addresses.
public struct CopySourceAllowance: Sendable, Equatable, CustomStringConvertible {
    public let scheme: String
    /// Lower-cased; without the `*.` of a wildcard.
    public let host: String
    public let port: Int
    public let isWildcard: Bool

    /// Nil when `text` is not an http(s) origin (a path, query or user-info is not one).
    public init?(_ text: String) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
            var host = components.percentEncodedHost?.lowercased(), !host.isEmpty, components.user == nil, components.password == nil,
            components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil
        else { return nil }
        isWildcard = host.hasPrefix("*.")
        if isWildcard { host.removeFirst(2) }
        guard !host.isEmpty, !host.contains("*") else { return nil }
        // A wildcard is over a domain's names, never over an address.
        if isWildcard, host.hasPrefix("[") || host.split(separator: ".").allSatisfy({ $0.allSatisfy(\.isNumber) }) { return nil }
        self.scheme = scheme
        self.host = host
        port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    public var description: String { "\(scheme)://\(isWildcard ? "*." : "")\(host):\(port)" }

    /// Whether a source URL's origin (`scheme://host[:port]`) is this one's.
    func matches(_ origin: String) -> Bool {
        guard let other = CopySourceAllowance(origin), !other.isWildcard, other.scheme == scheme, other.port == port else { return false }
        if isWildcard { return other.host.hasSuffix("." + host) }
        // This machine's loopback names are one host: allowing localhost allows 127.0.0.1.
        let loopback: Set<String> = ["localhost", "127.0.0.1", "[::1]"]
        return other.host == host || (loopback.contains(other.host) && loopback.contains(host))
    }
}
