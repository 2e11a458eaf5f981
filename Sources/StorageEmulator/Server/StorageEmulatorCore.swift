import CLinux
import Foundation
import StorageProtocol

/// What the server does with a request: answer it, answer it with a blob streamed as the
/// body, or (an injected fault) drop the connection.
public enum EmulatorReply: Sendable {
    case response(TransportResponse)
    case streamed(TransportResponse, BlobBody)
    case dropConnection
}

/// The emulator without its sockets: authenticates a request, injects a fault when asked,
/// routes it to the Blob or Table service and shapes errors as that service does. The HTTP
/// server hands it every request; tests may call it directly.
public final class StorageEmulatorCore: Sendable {
    let store: EmulatorStore
    let authenticator: RequestAuthenticator
    /// Verifies bearer tokens when the emulator was given an authority.
    let bearer: BearerAuthenticator?
    let faults: FaultInjector
    let blob: BlobService
    let table: TableService
    public let configuration: EmulatorConfiguration
    /// Request bodies held in memory across all connections (``BufferBudget``).
    let bufferBudget: BufferBudget
    /// Storage Analytics logging and metrics, when Set Service Properties switched them on.
    let analytics: StorageAnalytics

    /// A query page is about 1.3 MB of JSON, built in buffers past glibc's first mmap
    /// threshold (128 KiB): each was mapped, zeroed by the kernel and unmapped again, a third
    /// of the emulator's time serving a plan's reads (400 against 650 ms for 100,000
    /// entities). Buffers up to 32 MiB now come from the heap, which keeps up to 64 MiB free
    /// for the next page. Set once per process, when the first emulator starts.
    private static let keepLargeBuffers: Void = azs_keep_large_buffers(32 << 20, 64 << 20)

    public init(configuration: EmulatorConfiguration) throws {
        _ = Self.keepLargeBuffers
        self.configuration = configuration
        store = try EmulatorStore(
            dataDirectory: configuration.dataDirectory, command: configuration.command, versioning: configuration.blobVersioning,
            containerRetentionDays: configuration.containerRetentionDays)
        authenticator = RequestAuthenticator(
            signer: SharedKeySigner(account: configuration.accountName, key: configuration.accountKey),
            secure: configuration.tls != nil)
        if let authority = configuration.oauthAuthority, let tenant = configuration.oauthTenant {
            bearer = BearerAuthenticator(
                authority: authority, tenant: tenant, account: configuration.accountName, secure: configuration.tls != nil,
                transport: CurlTransport(trustedCertificates: configuration.trustedCertificates))
        } else {
            bearer = nil
        }
        bufferBudget = BufferBudget(limit: configuration.maxBufferedBodyBytes)
        faults = FaultInjector(rate: configuration.faultRate, seed: configuration.faultSeed)
        var blob = BlobService(store: store, account: configuration.accountName)
        blob.remote.allowances = configuration.copySourceAllowances
        blob.remote.transport = CurlTransport(trustedCertificates: configuration.trustedCertificates)
        blob.remote.timeout = configuration.copySourceTimeout
        blob.remote.names = configuration.settingNames
        blob.maxBlobBytes = configuration.maxBlobBodyBytes
        blob.maxCommittedBlobBytes = configuration.maxCommittedBlobBytes
        blob.rehydrationSeconds = configuration.rehydrationSeconds
        blob.secure = configuration.tls != nil
        blob.encryptionScopes = Set(configuration.encryptionScopes)
        self.blob = blob
        table = TableService(store: store, account: configuration.accountName)
        analytics = StorageAnalytics(store: store, account: configuration.accountName, flushSeconds: configuration.analyticsFlushSeconds)
    }

    /// Finishes what a stop interrupted: incremental copies left pending (their bytes are
    /// already copied). The server awaits it before it listens, so no client sees them pending;
    /// an init starts no work of its own.
    public func finishInterruptedWork() async {
        await blob.resumeIncrementalCopies()
    }

    /// The largest body the server reads for a request to `service`; the HTTP layer enforces
    /// it while reading, so an oversized body is never buffered.
    public func maxBodyBytes(_ service: EmulatorServiceKind) -> Int {
        service == .table ? EmulatorConfiguration.maxTableBodyBytes : configuration.maxBlobBodyBytes
    }

    /// Answers one request. Never throws: every failure becomes the service's error response.
    /// A request to the static website host: anonymous reads of `$web` (``StaticWebsite``).
    func website(_ request: TransportRequest) async -> EmulatorReply {
        let started = ContinuousClock.now
        let requestID = UUID().uuidString.lowercased()
        var reply: EmulatorReply
        do {
            let answer = try await blob.respondToWebsite(request)
            reply = answer.body.map { .streamed(answer.response, $0) } ?? .response(answer.response)
        } catch let error as ServiceError {
            reply = .response(errorResponse(error, request, .blob, requestID))
        } catch {
            reply = .response(
                errorResponse(ServiceError(500, .internalError, "The server encountered an internal error."), request, .blob, requestID))
        }
        record(request, service: .blob, requestBytes: 0, reply: reply, started: started)
        return reply
    }

    public func respond(_ request: TransportRequest, service: EmulatorServiceKind) async -> EmulatorReply {
        await respond(request, service: service, upload: nil)
    }

    /// Answers a request whose body (Put Blob, Put Block) the HTTP layer already streamed into
    /// the byte store; the upload is deleted unless the operation committed it.
    func respond(_ request: TransportRequest, service: EmulatorServiceKind, upload: StagedUpload?) async -> EmulatorReply {
        let started = ContinuousClock.now
        // Storage Analytics needs to know whether the credentials held; nothing is made for it
        // when analytics is off.
        let proven = analytics.mayObserve ? ProvenCredentials() : nil
        let reply = await ProvenCredentials.$current.withValue(proven) { await answer(request, service: service, upload: upload) }
        await upload?.release(from: store.bytes)
        let requestBytes = upload?.size ?? request.body.count
        record(request, service: service, requestBytes: requestBytes, reply: reply, started: started)
        if case .response(let response) = reply, response.status == 202, request.method == "PUT",
            request.query.contains(where: { $0.name == "comp" && $0.value == "properties" }),
            request.query.contains(where: { $0.name == "restype" && $0.value == "service" })
        {
            await analytics.reload()
        }
        if let proven, analytics.mayObserve {
            let client = RequestOrigin.clientAddress
            await analytics.observe(
                {
                    AnalyticsObservation.make(
                        request, service: service, reply: reply, requestBytes: requestBytes, started: started, client: client,
                        authentication: proven.authentication)
                }, service: service)
        }
        return reply
    }

    /// Writes one answered request to the request log (`--log-file`, `--verbose`), if any: every
    /// answer, including those the HTTP layer gives before the core sees the request (a URI it
    /// cannot parse, a body over the limit, a refusal before an upload's body is read).
    func record(_ request: TransportRequest, service: EmulatorServiceKind, requestBytes: Int, reply: EmulatorReply, started: ContinuousClock.Instant)
    {
        // Nothing is built for a logger that would drop it (the default).
        guard configuration.logger.logLevel <= .info else { return }
        let served = ServedRequest(
            request, service: service, requestBytes: requestBytes, reply: reply,
            elapsed: ContinuousClock.now - started, client: RequestOrigin.clientAddress)
        configuration.logger.info("\(served.method) \(served.url)", metadata: served.record.metadata)
    }

    private func answer(_ request: TransportRequest, service: EmulatorServiceKind, upload: StagedUpload?) async -> EmulatorReply {
        let requestID = UUID().uuidString.lowercased()
        // A CORS preflight is judged against the service's rules, before (and without) credentials.
        if request.method == "OPTIONS" {
            var response = CorsPolicy.preflight(request, rules: (try? await ServiceProperties.corsRules(service, in: store)) ?? [])
            response.headers["x-ms-request-id"] = requestID
            return .response(response)
        }
        let reply = await answerAuthenticated(request, service: service, upload: upload, requestID: requestID)
        guard request.headers["Origin"] != nil, let rules = try? await ServiceProperties.corsRules(service, in: store), !rules.isEmpty else {
            return reply
        }
        switch reply {
        case .response(var response):
            CorsPolicy.decorate(&response, request: request, rules: rules)
            return .response(response)
        case .streamed(var response, let body):
            CorsPolicy.decorate(&response, request: request, rules: rules)
            return .streamed(response, body)
        case .dropConnection:
            return reply
        }
    }

    private func answerAuthenticated(_ request: TransportRequest, service: EmulatorServiceKind, upload: StagedUpload?, requestID: String) async
        -> EmulatorReply
    {
        let fault = faults.next()
        var response: TransportResponse
        var stream: BlobBody?
        if fault == .serverBusy {
            response = errorResponse(
                ServiceError(503, .serverBusy, "The server is currently unable to receive requests. Please retry your request."),
                request, service, requestID)
        } else {
            do {
                try Self.checkVersion(request)
                var caller = try await authenticate(request, service: service)
                ProvenCredentials.current?.mark(caller)
                // A structured body not streamed in is decoded now, from a caller whose signature
                // held: the operation sees the content (uploads streamed in were decoded on arrival).
                var request = request
                if upload == nil, service == .blob, request.method == "PUT", let content = try StructuredMessage.decoded(request) {
                    request.body = content
                }
                // Only a Shared Key signature (not a SAS, not a token) lets Copy Blob read a
                // private source of this account without a grant of its own.
                let copyAccess = BlobService.CopySourceAccess(
                    sharedKey: caller == .account && !BearerAuthenticator.isBearer(request),
                    verifySAS: { [self] source in try await verifyCopySourceSAS(source) },
                    verifyToken: { [self] source in try await verifyCopySourceToken(source) })
                var keyRange: TableKeyRange?
                var overrides: [String: String] = [:]
                if case .sas(let grant) = caller {
                    try await authorize(grant, request, service: service)
                    keyRange = grant.keyRange
                    overrides = grant.responseHeaders
                    caller = .account
                    // `ses`: a blob write through the SAS is made with its scope; another is refused.
                    if !grant.encryptionScope.isEmpty, service == .blob, request.method == "PUT" {
                        if let asked = request.headers["x-ms-encryption-scope"], !asked.utf8.elementsEqual(grant.encryptionScope.utf8) {
                            throw ServiceError(
                                400, .invalidHeaderValue,
                                "The value for one of the HTTP headers is not in the correct format: x-ms-encryption-scope is not the SAS's encryption scope (ses)."
                            )
                        }
                        guard blob.encryptionScopes.contains(grant.encryptionScope) else {
                            throw BlobEncryption.unknownScope(grant.encryptionScope, header: "the SAS's ses")
                        }
                        request.headers["x-ms-encryption-scope"] = grant.encryptionScope
                    }
                }
                switch service {
                case .blob where Self.isUserDelegationKeyRequest(request):
                    response = try await userDelegationKey(request)
                case .blob where Self.isBlobBatch(request):
                    response = try await blobBatch(request, caller: caller)
                case .blob:
                    let reply = try await blob.respond(request, caller: caller, upload: upload, copyAccess: copyAccess)
                    response = reply.response
                    stream = reply.body
                    // A SAS's overrides replace what a read of the blob answers with.
                    if !overrides.isEmpty, request.method == "GET" || request.method == "HEAD", response.status == 200 || response.status == 206,
                        QueryParameters(request.query)["comp"] == nil, (try? blob.parseTarget(request.path).blob) != nil
                    {
                        for (name, value) in overrides { response.headers[name] = value }
                    }
                case .table: response = try await table.respond(request, caller: caller, keyRange: keyRange)
                }
            } catch let error as ServiceError {
                response = errorResponse(error, request, service, requestID)
            } catch {
                response = errorResponse(
                    ServiceError(500, .internalError, "The server encountered an internal error: \(error)."),
                    request, service, requestID)
            }
            switch fault {
            case .timeoutAfterApplying:
                response = errorResponse(
                    ServiceError(500, .operationTimedOut, "The operation could not be completed within the permitted time."),
                    request, service, requestID)
                stream?.discard()
                stream = nil
            case .dropAfterApplying:
                stream?.discard()
                return .dropConnection
            default: break
            }
        }
        response.headers["x-ms-request-id"] = requestID
        // A structured upload, decoded and checked, says so (the SDK verifies the echo).
        if request.method == "PUT", response.status < 300, let structured = request.headers["x-ms-structured-body"] {
            response.headers["x-ms-structured-body"] = structured
        }
        response.headers["x-ms-version"] = request.headers["x-ms-version"] ?? "2025-11-05"
        if let id = request.headers["x-ms-client-request-id"] { response.headers["x-ms-client-request-id"] = id }
        response.headers["Date"] = SharedKeySigner.httpDate(Date())
        response.headers["Server"] = "azseed-emulator"
        if let stream { return .streamed(response, stream) }
        return .response(response)
    }

    /// `x-ms-version`: a service version is a date, from the first (2009-09-19) to today; Azure
    /// refuses any other (the SDK then says the version is not enabled on the account), so the
    /// emulator does too, naming the header as Azure's error body does.
    static func checkVersion(_ request: TransportRequest) throws {
        guard let text = request.headers["x-ms-version"] else { return }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        let numbers = parts.compactMap { Int($0) }
        let valid =
            text.utf8.count == 10 && parts.count == 3 && numbers.count == 3 && (1...12).contains(numbers[1]) && (1...31).contains(numbers[2])
            && text >= "2009-09-19" && text <= String(ServerClock.wallClock().iso8601.prefix(10))
        guard valid else {
            var error = ServiceError(
                400, .invalidHeaderValue,
                "The value for one of the HTTP headers is not in the correct format: x-ms-version '\(text)' is no service version.")
            error.details = [("HeaderName", "x-ms-version"), ("HeaderValue", text)]
            throw error
        }
    }

    /// The answer to an upload that must be refused before its body is read: a bad signature,
    /// or an anonymous caller (who may only read). Nil when the body may be streamed in.
    func refusalBeforeBody(_ request: TransportRequest, service: EmulatorServiceKind) async -> TransportResponse? {
        let refusal: ServiceError
        do {
            guard try await authenticate(request, service: service) == .anonymous else { return nil }
            refusal = .resourceNotFound
        } catch {
            refusal = error
        }
        var response = errorResponse(refusal, request, service, UUID().uuidString.lowercased())
        response.headers["Connection"] = "close"
        return response
    }

    func errorResponse(_ error: ServiceError, _ request: TransportRequest, _ service: EmulatorServiceKind, _ requestID: String) -> TransportResponse {
        switch service {
        case .blob: ErrorBodies.blob(error, requestID: requestID, includeBody: request.method != "HEAD")
        case .table: ErrorBodies.table(error, requestID: requestID)
        }
    }

    /// The answer when the bodies buffered across connections reach their budget.
    func serverBusy(_ request: TransportRequest, service: EmulatorServiceKind) -> TransportResponse {
        var response = errorResponse(
            ServiceError(503, .serverBusy, "The server is currently unable to receive requests. Please retry your request."),
            request, service, UUID().uuidString.lowercased())
        response.headers["Connection"] = "close"
        return response
    }

    /// The error a body over the limit gets, in the service's shape.
    public func bodyTooLarge(_ request: TransportRequest, service: EmulatorServiceKind) -> TransportResponse {
        var response = errorResponse(.bodyTooLarge, request, service, UUID().uuidString.lowercased())
        response.headers["Connection"] = "close"
        return response
    }
}

/// The two services the emulator serves, each on its own port.
public enum EmulatorServiceKind: Sendable, Equatable {
    case blob, table
}
