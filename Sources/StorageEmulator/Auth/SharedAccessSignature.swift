import Foundation
import StorageProtocol

/// What a verified shared access signature grants: where, and which permission letters.
struct SASGrant: Sendable, Equatable {
    enum Scope: Sendable, Equatable {
        /// An account SAS: the services (`ss`: b, q, t, f) and resource types (`srt`: s service,
        /// c container or table, o object) it covers.
        case account(services: String, resourceTypes: String)
        /// A service SAS for a container (`sr=c`) or one blob (`sr=b`).
        case container(String)
        case blob(container: String, name: String)
        /// A directory SAS (`sr=d`, `sdd`): the blobs whose names continue a directory path
        /// (`dir` itself, or `dir/…`).
        case directory(container: String, path: String)
        /// A service SAS for one table (`tn`), matched case-insensitively as table names are.
        case table(String)
    }

    var scope: Scope
    /// The `sp` letters (with a stored access policy, once ``StoredPolicy`` merged its own).
    var permissions: String
    /// A service SAS's stored access policy (`si`): its start, expiry and permissions come
    /// from the container's or table's ACL, checked once the policy is read.
    var policy: String? = nil
    var start = "", expiry = ""
    /// A table SAS's key range (`spk`/`srk`/`epk`/`erk`), enforced by the Table service.
    var keyRange: TableKeyRange? = nil
    /// A blob service SAS's response header overrides (`rscc`, `rscd`, `rsce`, `rscl`,
    /// `rsct`): the headers a read of a blob through it answers with, by header name.
    var responseHeaders: [String: String] = [:]
    /// `ses`: the encryption scope blob writes through this SAS are made with.
    var encryptionScope = ""

    /// The query fields of the overrides and the headers they set.
    static let overrideFields = [
        ("rscc", "Cache-Control"), ("rscd", "Content-Disposition"), ("rsce", "Content-Encoding"), ("rscl", "Content-Language"),
        ("rsct", "Content-Type"),
    ]
}

/// Checks a shared access signature the way the service does (docs/PROTOCOL.md §11): its
/// fields, its HMAC over the string-to-sign of its kind and version, its time window and
/// protocol (`spr`, against whether this emulator serves HTTPS), source address (`sip`) and
/// a table SAS's key range. What this emulator does not implement — encryption scopes
/// (`ses`), response header overrides (`rsc*`), user delegation and snapshot or version SAS —
/// is refused with 403 saying so, never ignored: ignoring it would grant more than the SAS does.
struct SharedAccessSignature {
    let signer: SharedKeySigner
    /// Whether requests arrive over HTTPS (`azseed emulator --cert/--key`).
    var secure = false

    /// The oldest `sv` whose string-to-sign is implemented: the layouts with `sip` and `spr`.
    static let oldestVersion = "2015-04-05"

    /// `clientAddress` is the peer's IP address, checked against `sip`.
    func verify(_ request: TransportRequest, service: EmulatorServiceKind, now: Date, clientAddress: String?) throws(ServiceError) -> SASGrant {
        var fields: [String: String] = [:]
        for (name, value) in request.query where Self.signedNames.contains(name) { fields[name] = value }
        func field(_ name: String) -> String { fields[name] ?? "" }
        guard let signature = fields["sig"], let version = fields["sv"], !version.isEmpty else {
            throw Self.failed("Signature fields not well formed.")
        }
        for name in ["sduoid"] where !field(name).isEmpty {
            throw Self.failed("The SAS field '\(name)' is not supported by this emulator; make a SAS without it.")
        }
        guard version >= Self.oldestVersion else {
            throw Self.failed("SAS version \(version) is older than \(Self.oldestVersion), the oldest this emulator verifies.")
        }
        let policy = field("si").isEmpty ? nil : field("si")
        // Without a stored policy the SAS itself must say what and until when.
        guard policy != nil || (!field("sp").isEmpty && !field("se").isEmpty) else { throw Self.failed("Signature fields not well formed.") }

        let account = signer.account
        var grant: SASGrant
        let isTableSAS = fields["ss"] == nil && fields["srt"] == nil && service == .table
        if !isTableSAS, let name = ["spk", "srk", "epk", "erk"].first(where: { !field($0).isEmpty }) {
            throw Self.failed("Signature fields not well formed: '\(name)' belongs to a table SAS (tn).")
        }
        if fields["sr"] == nil || service == .table, let name = SASGrant.overrideFields.map(\.0).first(where: { !field($0).isEmpty }) {
            throw Self.failed("Signature fields not well formed: '\(name)' belongs to a blob service SAS (sr).")
        }
        let stringToSign: String
        // The account key, or for a user delegation SAS the key it names.
        var signingKey = signer
        if fields["ss"] != nil || fields["srt"] != nil {
            var lines = [account, field("sp"), field("ss"), field("srt"), field("st"), field("se"), field("sip"), field("spr"), version]
            if version >= "2020-12-06" { lines.append(field("ses")) }
            stringToSign = lines.map { $0 + "\n" }.joined()
            guard policy == nil else { throw Self.failed("An account SAS cannot use a stored access policy (si).") }
            grant = SASGrant(scope: .account(services: field("ss"), resourceTypes: field("srt")), permissions: field("sp"))
        } else if service == .table {
            let table = field("tn")
            guard !table.isEmpty else { throw Self.failed("Signature fields not well formed: a table SAS names its table in 'tn'.") }
            stringToSign = [
                field("sp"), field("st"), field("se"), "/table/\(account)/\(table.lowercased())", field("si"), field("sip"), field("spr"),
                version, field("spk"), field("srk"), field("epk"), field("erk"),
            ].joined(separator: "\n")
            grant = SASGrant(scope: .table(table), permissions: field("sp"))
            grant.keyRange = try TableKeyRange(spk: field("spk"), srk: field("srk"), epk: field("epk"), erk: field("erk"))
        } else {
            let (container, blob) = try Self.blobPath(request.path, account: account)
            let resource = field("sr")
            let canonical: String
            // A snapshot SAS (sr=bs) signs the snapshot it reads: the request's own `snapshot`,
            // so it opens that snapshot and nothing else (not the base blob, not another).
            // A version SAS (sr=bv) likewise signs the version it acts on (`versionid`).
            let stateName = resource == "bs" ? "snapshot" : resource == "bv" ? "versionid" : nil
            let snapshot = stateName.map { name in request.query.first { $0.name == name }?.value ?? "" } ?? ""
            switch resource {
            case "c":
                guard let container else { throw Self.failed("A container SAS (sr=c) signs requests to its container.") }
                canonical = "/blob/\(account)/\(container)"
                grant = SASGrant(scope: .container(container), permissions: field("sp"))
            case "b", "bs", "bv":
                guard let container, let blob else { throw Self.failed("A blob SAS (sr=\(resource)) signs requests to its blob.") }
                if let stateName, snapshot.isEmpty {
                    throw Self.failed(
                        "A SAS with sr=\(resource) signs requests to one \(stateName == "snapshot" ? "snapshot" : "version") (\(stateName)=).")
                }
                canonical = "/blob/\(account)/\(container)/\(blob)"
                grant = SASGrant(scope: .blob(container: container, name: blob), permissions: field("sp"))
            case "d":
                // The directory is the request's blob path cut to `sdd` segments: the signature
                // holds only for requests below the directory it was made for.
                guard let container, let blob else { throw Self.failed("A directory SAS (sr=d) signs requests to blobs below its directory.") }
                guard let depth = Int(field("sdd")), depth >= 1, depth <= 1024 else {
                    throw Self.failed("Signature fields not well formed: a directory SAS (sr=d) names its depth in 'sdd'.")
                }
                let segments = blob.split(separator: "/", omittingEmptySubsequences: false)
                guard segments.count >= depth else { throw Self.failed("The blob is not below the SAS's directory (sdd=\(depth)).") }
                let path = segments.prefix(depth).joined(separator: "/")
                canonical = "/blob/\(account)/\(container)/\(path)"
                grant = SASGrant(scope: .directory(container: container, path: path), permissions: field("sp"))
            default:
                throw Self.failed("The SAS resource sr=\(resource) is not supported by this emulator; use sr=c, sr=b, sr=bs, sr=bv or sr=d.")
            }
            var lines = [field("sp"), field("st"), field("se"), canonical]
            if !field("skoid").isEmpty {
                let key = try Self.delegationKey(fields, version: version, service: service, now: now)
                signingKey = key.sasSigner(signer)
                lines += [key.objectID, key.tenantID, key.start, key.expiry, key.service, key.version]
                if version >= "2020-02-10" { lines += [field("saoid"), field("suoid"), field("scid")] }
                if version >= "2026-04-06" { lines += [key.delegatedTenant, field("sduoid")] }
            } else {
                if let name = Self.delegationNames.first(where: { !field($0).isEmpty }) {
                    throw Self.failed("Signature fields not well formed: '\(name)' belongs to a user delegation SAS (skoid).")
                }
                lines.append(field("si"))
            }
            lines += [field("sip"), field("spr"), version]
            if version >= "2018-11-09" { lines += [resource, snapshot] }
            if version >= "2020-12-06" { lines.append(field("ses")) }
            if !field("skoid").isEmpty, version >= "2026-04-06" {
                lines += [try Self.signedHeaders(field("srh"), request), try Self.signedQuery(field("srq"), request)]
            } else if let name = ["srh", "srq"].first(where: { !field($0).isEmpty }) {
                throw Self.failed("Signature fields not well formed: '\(name)' belongs to a user delegation SAS of version 2026-04-06 or later.")
            }
            lines += [field("rscc"), field("rscd"), field("rsce"), field("rscl"), field("rsct")]
            stringToSign = lines.joined(separator: "\n")
            for (name, header) in SASGrant.overrideFields where !field(name).isEmpty { grant.responseHeaders[header] = field(name) }
        }
        guard RequestAuthenticator.constantTimeEqual(signingKey.signature(stringToSign), signature) else {
            throw Self.failed("Signature did not match. String to sign used was \(stringToSign.replacingOccurrences(of: "\n", with: "\\n"))")
        }
        var checked = grant
        checked.policy = policy
        checked.encryptionScope = field("ses")
        checked.start = field("st")
        checked.expiry = field("se")
        if policy == nil { try Self.checkTime(start: field("st"), expiry: field("se"), now: now) }
        if !field("sip").isEmpty {
            guard let range = IPv4Range(field("sip")) else {
                throw Self.failed("Signature fields not well formed: 'sip' is not an IPv4 address or range.")
            }
            guard let address = clientAddress.flatMap(IPv4Range.address), range.contains(address) else {
                throw ServiceError(
                    403, .authorizationSourceIPMismatch,
                    "This request is not authorized to perform this operation using this source IP \(clientAddress ?? "(unknown)").")
            }
        }
        // `spr` is `https` or `https,http`: an HTTPS-only SAS does not authorize plain HTTP.
        if !secure, !field("spr").isEmpty, !field("spr").split(separator: ",").contains("http") {
            throw ServiceError(403, .authorizationProtocolMismatch, "This request is not authorized to perform this operation using this protocol.")
        }
        if case .account(let services, _) = grant.scope, !services.contains(service == .blob ? "b" : "t") {
            throw ServiceError(403, .authorizationServiceMismatch, "This request is not authorized to perform this operation using this service.")
        }
        return checked
    }

    /// The query parameters that are part of a SAS (the rest belong to the operation).
    static let signedNames: Set<String> = [
        "sv", "ss", "srt", "sp", "st", "se", "sip", "spr", "ses", "sig", "sr", "si", "tn", "spk", "srk", "epk", "erk",
        "rscc", "rscd", "rsce", "rscl", "rsct", "skoid", "sktid", "skt", "ske", "sks", "skv", "sdd",
        "saoid", "suoid", "scid", "skdutid", "sduoid", "srh", "srq",
    ]

    /// The fields only a user delegation SAS has.
    static let delegationNames = ["sktid", "skt", "ske", "sks", "skv", "saoid", "suoid", "scid", "skdutid", "sduoid", "srh", "srq"]

    /// The user delegation key a SAS names, checked: every field present, for this service,
    /// valid now. Its value is recomputed (``UserDelegationKey``); a forged field changes it.
    static func delegationKey(_ fields: [String: String], version: String, service: EmulatorServiceKind, now: Date) throws(ServiceError)
        -> UserDelegationKey
    {
        func field(_ name: String) -> String { fields[name] ?? "" }
        for name in ["sktid", "skt", "ske", "sks", "skv"] where field(name).isEmpty {
            throw failed("Signature fields not well formed: a user delegation SAS names its key's '\(name)'.")
        }
        guard field("sks").contains(service == .blob ? "b" : "t") else {
            throw ServiceError(403, .authorizationServiceMismatch, "This request is not authorized to perform this operation using this service.")
        }
        guard EdmDateTime(iso8601: field("skt")) != nil, EdmDateTime(iso8601: field("ske")) != nil else {
            throw failed("Signature fields not well formed: 'skt' and 'ske' must be ISO 8601 UTC times.")
        }
        do { try checkTime(start: field("skt"), expiry: field("ske"), now: now) } catch {
            throw failed("The user delegation key is not valid now: Start [\(field("skt"))] - Expiry [\(field("ske"))].")
        }
        return UserDelegationKey(
            objectID: field("skoid"), tenantID: field("sktid"), start: field("skt"), expiry: field("ske"), service: field("sks"),
            version: field("skv"), delegatedTenant: field("skdutid"))
    }

    /// The string-to-sign part of `srh`: each named header with the value this request carries
    /// (`name:value`, one per line); a header the request lacks makes the signature fail.
    static func signedHeaders(_ names: String, _ request: TransportRequest) throws(ServiceError) -> String {
        guard !names.isEmpty else { return "" }
        return names.split(separator: ",", omittingEmptySubsequences: false).map { name in
            let decoded = String(name).removingPercentEncoding ?? String(name)
            return "\(decoded):\(request.headers[decoded] ?? "")\n"
        }.joined()
    }

    /// The string-to-sign part of `srq`: each named query parameter with this request's value.
    static func signedQuery(_ names: String, _ request: TransportRequest) throws(ServiceError) -> String {
        guard !names.isEmpty else { return "" }
        return names.split(separator: ",", omittingEmptySubsequences: false).map { name in
            let decoded = String(name).removingPercentEncoding ?? String(name)
            return "\n\(decoded):\(request.query.first { $0.name == decoded }?.value ?? "")"
        }.joined()
    }

    /// Whether the request carries a SAS (its signature).
    static func isPresent(in request: TransportRequest) -> Bool { request.query.contains { $0.name == "sig" } }

    /// The container and decoded blob name a path-style request addresses.
    static func blobPath(_ path: String, account: String) throws(ServiceError) -> (String?, String?) {
        let segments = path.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard segments.count > 1, segments[1] == account else { return (nil, nil) }
        let container = segments.count > 2 ? segments[2].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false) : []
        guard let first = container.first, !first.isEmpty else { return (nil, nil) }
        let name = container.count > 1 && !container[1].isEmpty ? String(container[1]).removingPercentEncoding : nil
        return (String(first).removingPercentEncoding, name)
    }

    static func checkTime(start: String, expiry: String, now: Date) throws(ServiceError) {
        let current = EdmDateTime(unixSeconds: Int64(now.timeIntervalSince1970))
        guard let end = EdmDateTime(iso8601: expiry), start.isEmpty || EdmDateTime(iso8601: start) != nil else {
            throw failed("Signature fields not well formed: 'st' and 'se' must be ISO 8601 UTC times.")
        }
        let begin = start.isEmpty ? nil : EdmDateTime(iso8601: start)
        if let begin, current < begin || end < current {
            throw failed("Signature not valid in the specified time frame: Start [\(start)] - Expiry [\(expiry)] - Current [\(current.iso8601)]")
        }
        if begin == nil, end < current {
            throw failed("Signature not valid in the specified time frame: Start [] - Expiry [\(expiry)] - Current [\(current.iso8601)]")
        }
    }

    static func failed(_ detail: String) -> ServiceError {
        var error = ServiceError(
            403, .authenticationFailed,
            "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.")
        error.message += "\n" + detail
        return error
    }
}
