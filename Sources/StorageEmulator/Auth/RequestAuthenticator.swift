import Foundation
import StorageProtocol

/// Who a request is from, once its signature is checked.
enum Caller: Sendable, Equatable {
    /// Signed with the account key.
    case account
    /// No Authorization header: may only read what a container's access level allows.
    case anonymous
    /// A verified shared access signature: may do what it grants (``SASAuthorization``).
    case sas(SASGrant)
}

/// Checks Shared Key and Shared Key Lite signatures with the client's own signing code
/// (docs/PROTOCOL.md §2–3), so the emulator and the client cannot drift apart silently.
struct RequestAuthenticator: Sendable {
    let signer: SharedKeySigner
    /// Whether requests arrive over HTTPS (a SAS's `spr` is checked against it).
    var secure = false
    /// How far the request's date may be from the server clock (Azure allows 15 minutes).
    var allowedSkew: TimeInterval = 15 * 60

    func authenticate(_ request: TransportRequest, service: EmulatorServiceKind, now: Date = Date()) throws(ServiceError) -> Caller {
        guard let authorization = request.headers["Authorization"] else {
            if SharedAccessSignature.isPresent(in: request) {
                return .sas(
                    try SharedAccessSignature(signer: signer, secure: secure)
                        .verify(request, service: service, now: now, clientAddress: RequestOrigin.clientAddress))
            }
            return .anonymous
        }
        let parts = authorization.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, let colon = parts[1].lastIndex(of: ":") else {
            throw Self.failed("The Authorization header is not of the form 'SharedKey account:signature'.")
        }
        let scheme = parts[0]
        let account = String(parts[1][..<colon])
        let given = String(parts[1][parts[1].index(after: colon)...])
        guard account == signer.account else { throw Self.failed("The account '\(account)' in the Authorization header is not this account.") }
        guard let dateText = request.headers["x-ms-date"] ?? request.headers["Date"] else {
            throw Self.failed("The request has no x-ms-date or Date header.")
        }
        guard let date = ServerClock.parseHTTPDate(dateText) else { throw Self.failed("The date '\(dateText)' is not an RFC 1123 date.") }
        guard abs(date.timeIntervalSince(now)) <= allowedSkew else {
            throw Self.failed("Request date header too old or too far in the future: '\(dateText)'.")
        }
        let candidates: [String]
        // Signed over the path as sent: a host-style request's path has no account in front.
        let request = VirtualHost.asSent(request, account: account)
        switch (service, scheme) {
        case (.blob, "SharedKey"):
            candidates = [
                SharedKeySigner.blobStringToSign(request, account: account),
                SharedKeySigner.blobStringToSign(request, account: account, ordinalHeaders: true),
            ]
        case (.blob, "SharedKeyLite"):
            candidates = [SharedKeySigner.blobLiteStringToSign(request, account: account)]
        case (.table, "SharedKey"):
            candidates = [SharedKeySigner.tableStringToSign(request, account: account)]
        case (.table, "SharedKeyLite"):
            candidates = [SharedKeySigner.tableLiteStringToSign(request, account: account)]
        default:
            throw Self.failed("The authorization scheme '\(scheme)' is not supported; use SharedKey or SharedKeyLite.")
        }
        for candidate in candidates where Self.constantTimeEqual(signer.signature(candidate), given) {
            return .account
        }
        throw Self.failed("The MAC signature found in the HTTP request is not the same as any computed signature.")
    }

    static func failed(_ detail: String) -> ServiceError {
        var error = ServiceError.authenticationFailed
        error.message += "\n" + detail
        return error
    }

    /// Compares signatures without leaking, through timing, how much of a guess was right.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
