import Foundation

/// A Blob service SAS signed with the account key (docs/PROTOCOL.md §13, service SAS for
/// `sv` 2020-12-06 and later): what `azseed copy` hands the target account so it can read
/// the source's blobs itself (Put Blob From URL), without the bytes passing through azseed.
///
/// Only read-only container SAS (`sr=c`) are made: the smallest grant a copy needs.
public struct ServiceSAS: Sendable {
    /// The service version the signature follows; fixes the string-to-sign's layout.
    public static let version = "2020-12-06"

    let signer: SharedKeySigner

    public init(account: String, key: AccountKey) {
        signer = SharedKeySigner(account: account, key: key)
    }

    /// A SAS reading container `container`'s blobs (`sp=r`) until `expiry`, HTTPS and HTTP
    /// alike when `httpsOnly` is false. `start` is backdated by the caller when clocks may
    /// differ. Returns the query (without `?`).
    public func containerReadToken(container: String, start: Date?, expiry: Date, httpsOnly: Bool) -> SASToken {
        let st = start.map(Self.time) ?? ""
        let se = Self.time(expiry)
        let spr = httpsOnly ? "https" : "https,http"
        // sp, st, se, canonicalized resource, si, sip, spr, sv, sr, snapshot time, ses,
        // rscc, rscd, rsce, rscl, rsct — one per line, no trailing newline.
        let fields = ["r", st, se, "/blob/\(signer.account)/\(container)", "", "", spr, Self.version, "c", "", "", "", "", "", "", ""]
        let signature = signer.signature(fields.joined(separator: "\n"))
        var parameters: [(String, String)] = [("sv", Self.version)]
        if !st.isEmpty { parameters.append(("st", st)) }
        parameters += [("se", se), ("sr", "c"), ("sp", "r"), ("spr", spr), ("sig", signature)]
        return SASToken(parameters: parameters)
    }

    /// ISO 8601 to the second, UTC, as the SDKs write SAS times.
    static func time(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}

extension SASToken {
    /// A token from decoded parameters (made here, so always carrying `sig`).
    init(parameters: [(String, String)]) {
        self.parameters = parameters
    }

    /// The token as a URL query, each value percent-encoded.
    public var query: String {
        parameters.map { "\($0.0)=\(PercentEncoding.component($0.1))" }.joined(separator: "&")
    }
}
