import Foundation
import StorageProtocol

/// Who sent a request and what it may do: Shared Key, SAS (service, account, user delegation)
/// and bearer tokens, and the copy sources a copy may read. Dispatch is in
/// `StorageEmulatorCore.swift`; this is the authorisation it asks.
extension StorageEmulatorCore {
    /// Who sent the request: a bearer token checked against the authority's keys, else a
    /// Shared Key signature, a SAS or nobody (``RequestAuthenticator``).
    func authenticate(_ request: TransportRequest, service: EmulatorServiceKind) async throws(ServiceError) -> Caller {
        guard BearerAuthenticator.isBearer(request) else { return try authenticator.authenticate(request, service: service) }
        guard let bearer else {
            throw RequestAuthenticator.failed(
                ("Bearer tokens are not accepted: this emulator was started without \(Setting.tokenAuthority)." as Phrase).rendered(
                    configuration.settingNames))
        }
        try await bearer.verify(request, service: service)
        return .account
    }

    /// Verifies the SAS a copy source of this account carries, as a read of that source: its
    /// signature, times, `sip`, `spr`, scope and `r` (a stored policy's too). A failure is
    /// CannotVerifyCopySource with the status and code reading the source would have had.
    func verifyCopySourceSAS(_ source: TransportRequest) async throws {
        do {
            guard case .sas(let grant) = try authenticator.authenticate(source, service: .blob) else { throw BlobService.copySourceNotAuthorized }
            try await authorize(grant, source, service: .blob)
        } catch let error as ServiceError where error.code != .cannotVerifyCopySource {
            var refused = ServiceError(
                error.status, .cannotVerifyCopySource,
                error.message.split(separator: "\n").first.map(String.init) ?? error.message)
            refused.headers.append(("x-ms-copy-source-status-code", String(error.status)))
            refused.headers.append(("x-ms-copy-source-error-code", error.code.rawValue))
            throw refused
        }
    }

    static func isUserDelegationKeyRequest(_ request: TransportRequest) -> Bool {
        let query = QueryParameters(request.query)
        return query["restype"] == "service" && query["comp"] == "userdelegationkey" && request.path.split(separator: "/").count <= 1
    }

    /// Get User Delegation Key: only for a Microsoft Entra principal (a bearer token), as on
    /// Azure — a key or SAS holder has no identity a key could be issued to.
    func userDelegationKey(_ request: TransportRequest) async throws -> TransportResponse {
        guard request.method == "POST" else { throw ServiceError.unsupportedVerb(request.method) }
        guard let bearer, BearerAuthenticator.isBearer(request) else {
            throw ServiceError(
                403, .authenticationFailed,
                "Server failed to authenticate the request. Only a Microsoft Entra principal (a bearer token) may get a user delegation key.")
        }
        let principal = try await bearer.verify(request, service: .blob)
        return try UserDelegationKey.answer(request, principal: principal, signer: authenticator.signer, now: Date())
    }

    /// `x-ms-copy-source-authorization` for a source of this account: a bearer token verified
    /// as the Authorization header's would be (Azure takes no other scheme there). A token
    /// holder may read anything, as with the Authorization header (no role assignments here).
    func verifyCopySourceToken(_ source: TransportRequest) async throws {
        do {
            guard let bearer, BearerAuthenticator.isBearer(source) else {
                throw ServiceError(
                    401, .cannotVerifyCopySource,
                    "Server failed to authenticate the request. x-ms-copy-source-authorization takes a bearer token, which this emulator verifies only when started with a token authority."
                )
            }
            try await bearer.verify(source, service: .blob)
        } catch let error as ServiceError {
            var refused = ServiceError(
                error.status, .cannotVerifyCopySource,
                error.message.split(separator: "\n").first.map(String.init) ?? error.message)
            refused.headers.append(("x-ms-copy-source-status-code", String(error.status)))
            refused.headers.append(
                ("x-ms-copy-source-error-code", error.code == .cannotVerifyCopySource ? "InvalidAuthenticationInfo" : error.code.rawValue))
            throw refused
        }
    }

    /// Refuses (403) what a verified SAS does not grant; afterwards the request runs with the
    /// account's authority.
    func authorize(_ sas: SASGrant, _ request: TransportRequest, service: EmulatorServiceKind) async throws {
        var grant = sas
        if grant.policy != nil {
            // The stored access policy lives in the ACL of the container or table the SAS names.
            switch grant.scope {
            case .container(let name), .blob(let name, _), .directory(let name, _):
                grant = try StoredPolicy.resolve(grant, acl: try await store.container(name)?.acl ?? "", now: Date())
            case .table(let name):
                grant = try StoredPolicy.resolve(grant, acl: (try? await store.tableACL(name)) ?? "", now: Date())
            case .account:
                break
            }
        }
        switch service {
        case .blob where Self.isBlobBatch(request):
            // The batch itself changes nothing: each subrequest carries its own SAS and is
            // authorized on its own (``blobBatch``). The outer SAS must cover where the batch is sent.
            let (container, _) = try SharedAccessSignature.blobPath(request.path, account: configuration.accountName)
            switch grant.scope {
            case .account: break
            case .container(let name) where container.map({ $0.utf8.elementsEqual(name.utf8) }) ?? false: break
            default: throw SASAuthorization.notAuthorized
            }
        case .blob:
            try await SASAuthorization.checkBlob(grant, request, account: configuration.accountName) {
                let (container, blob) = try SharedAccessSignature.blobPath(request.path, account: configuration.accountName)
                guard let container, let blob else { return false }
                return try await store.blob(container, blob).1 != nil
            }
        case .table:
            let resource = try TableResource.parse(request.path, account: configuration.accountName)
            var batch: [(method: String, resource: TableResource, headers: HeaderFields)] = []
            if resource == .batch, let contentType = request.headers["Content-Type"],
                let inner = try? BatchRequestParser.parse(request.body, contentType: contentType)
            {
                // A batch that does not parse gets its 400 from the Table service (nothing applied).
                for operation in inner {
                    batch.append(
                        (
                            operation.method,
                            try TableResource.parse(
                                TableService.path(ofAbsolute: operation.url, account: configuration.accountName), account: configuration.accountName),
                            operation.headers
                        ))
                }
            } else if resource == .batch {
                return
            }
            try SASAuthorization.checkTable(
                grant, resource, method: request.method, headers: request.headers,
                isACL: request.query.contains { $0.name == "comp" && $0.value == "acl" }, batch: batch)
        }
    }
}
