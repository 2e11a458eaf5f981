import Foundation
import StorageProtocol

/// Accounts addressed in the host name (`https://devstoreaccount1.blob.localhost:10000/c/b`),
/// as Azure addresses every account and the official SDKs' own tests address Azurite, beside
/// the path-style URLs (`/devstoreaccount1/c/b`) an emulator is usually reached by.
///
/// A host-style request is served as its path-style twin (the account put in front of the
/// path), and marked so that Shared Key checks its signature over the path as the client sent
/// it — Azure's canonicalized resource is `/<account><path>` in both forms, so the two forms of
/// one request sign different strings.
enum VirtualHost {
    /// Set on a request rewritten from host style; never taken from a client (stripped first).
    static let marker = "X-Azseed-Host-Style"

    /// The account a host names (`<account>.<service>.<anything>`), if it is `account` — or its
    /// read-only secondary (`<account>-secondary`), which the SDKs reach for geo-replication
    /// statistics and retries; the emulator has one copy of the data, which serves both.
    static func names(_ host: String, account: String, service: String, secondary: Bool = true) -> Bool {
        let labels = host.lowercased().split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        let first = firstLabel(host)
        return (first == account.lowercased() || (secondary && first == account.lowercased() + "-secondary"))
            && labels[1].split(separator: ":").first.map(String.init) == service
    }

    /// A host's first label, lower-cased, without a port written into it (`acct:1.blob.x`).
    static func firstLabel(_ host: String) -> String {
        let label = host.lowercased().split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return label.split(separator: ":", omittingEmptySubsequences: false).first.map(String.init) ?? ""
    }

    /// Whether the request writes through the account's secondary host (`<account>-secondary.`),
    /// which Azure serves read-only.
    static func isSecondaryWrite(_ request: TransportRequest, account: String) -> Bool {
        guard !["GET", "HEAD", "OPTIONS"].contains(request.method), let host = request.headers["Host"] else { return false }
        return firstLabel(host) == account.lowercased() + "-secondary"
    }

    /// The request as path style, marked, when its Host names this account and service.
    static func pathStyle(_ request: TransportRequest, account: String, service: EmulatorServiceKind) -> TransportRequest {
        var request = request
        request.headers[marker] = nil
        guard let host = request.headers["Host"], names(host, account: account, service: service == .blob ? "blob" : "table") else { return request }
        request.path = "/" + account + (request.path.hasPrefix("/") ? request.path : "/" + request.path)
        request.headers[marker] = "1"
        return request
    }

    /// The request as its client signed it: without the account put in front of a host-style path.
    static func asSent(_ request: TransportRequest, account: String) -> TransportRequest {
        guard request.headers[marker] != nil else { return request }
        var sent = request
        sent.headers[marker] = nil
        sent.path = String(request.path.dropFirst(account.count + 1))
        if sent.path.isEmpty { sent.path = "/" }
        return sent
    }
}
