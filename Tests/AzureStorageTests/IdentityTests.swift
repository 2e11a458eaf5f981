import AzureStorage
import Foundation
import Synchronization
import Testing

/// A credential that counts its calls and hands out tokens living `lifetime` seconds from
/// the test clock, or fails when told to.
final class CountingCredential: TokenCredential {
    let name = "counting"
    let calls = Mutex(0)
    let failing = Mutex(false)
    let clock: TestClock
    let lifetime: TimeInterval

    init(clock: TestClock, lifetime: TimeInterval = 3600) {
        self.clock = clock
        self.lifetime = lifetime
    }

    func token(scope: String) async throws -> AccessToken {
        let n = calls.withLock {
            $0 += 1
            return $0
        }
        // Long enough that concurrent callers arrive while the first fetch is in flight.
        try await Task.sleep(for: .milliseconds(50))
        if failing.withLock({ $0 }) { throw AzureStorageError(kind: .credential, operation: "Get a token", url: "", message: "refused") }
        return AccessToken(token: "token-\(n)", expiresOn: clock.now.addingTimeInterval(lifetime))
    }
}

final class TestClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

@Suite struct IdentityTests {
    @Test func aTokenIsReusedUntilFiveMinutesBeforeItExpires() async throws {
        let clock = TestClock()
        let credential = CountingCredential(clock: clock)
        let source = BearerTokenSource(credential: credential, now: { clock.now })
        #expect(try await source.token().token == "token-1")
        clock.advance(3600 - 301)
        #expect(try await source.token().token == "token-1")
        clock.advance(2)
        #expect(try await source.token().token == "token-2")
        #expect(credential.calls.withLock { $0 } == 2)
    }

    @Test func concurrentRequestsShareOneFetch() async throws {
        let clock = TestClock()
        let credential = CountingCredential(clock: clock)
        let source = BearerTokenSource(credential: credential, now: { clock.now })
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 { group.addTask { try await source.token().token } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens == ["token-1"])
        #expect(credential.calls.withLock { $0 } == 1)
    }

    @Test func aFailedEarlyRefreshKeepsTheTokenThatStillWorks() async throws {
        let clock = TestClock()
        let credential = CountingCredential(clock: clock)
        let source = BearerTokenSource(credential: credential, now: { clock.now })
        _ = try await source.token()
        credential.failing.withLock { $0 = true }
        clock.advance(3600 - 200)  // inside the refresh window, 200 s before expiry
        #expect(try await source.token().token == "token-1")
        #expect(credential.calls.withLock { $0 } == 2)
        // For 30 s after a failed refresh the working token is used without asking again.
        clock.advance(10)
        #expect(try await source.token().token == "token-1")
        #expect(credential.calls.withLock { $0 } == 2)
        clock.advance(25)
        #expect(try await source.token().token == "token-1")
        #expect(credential.calls.withLock { $0 } == 3)
        clock.advance(300)  // now expired: the failure shows
        await #expect(throws: AzureStorageError.self) { try await source.token() }
    }

    @Test func bearerTokensAreNeverSentOverPlainHTTP() async throws {
        let clock = TestClock()
        var account = StorageAccount.development()
        account.credential = .bearer(BearerTokenSource(credential: CountingCredential(clock: clock), now: { clock.now }))
        let transport = FakeTransport(responses: [TransportResponse(status: 201)])
        let error = await #expect(throws: AzureStorageError.self) {
            try await BlobClient(account: account, transport: transport).createContainer("speakers")
        }
        #expect(error?.kind == .invalidRequest)
        #expect(transport.requests.isEmpty)
    }

    @Test func theBearerTokenGoesInTheAuthorizationHeader() async throws {
        let clock = TestClock()
        var account = StorageAccount.development()
        account.blobEndpoint = URL(string: "https://example.blob.core.windows.net")!
        account.credential = .bearer(BearerTokenSource(credential: CountingCredential(clock: clock), now: { clock.now }))
        let transport = FakeTransport(responses: [TransportResponse(status: 201)])
        try await BlobClient(account: account, transport: transport).createContainer("speakers")
        #expect(transport.requests[0].headers["Authorization"] == "Bearer token-1")
        #expect(transport.requests[0].query.map(\.name) == ["restype"])
    }

    @Test func theChainFollowsDefaultAzureCredentialsOrder() throws {
        let everything = [
            "AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "AZURE_CLIENT_SECRET": "s", "AZURE_FEDERATED_TOKEN_FILE": "/f",
            "IDENTITY_ENDPOINT": "http://127.0.0.1:1/msi", "IDENTITY_HEADER": "h", "PATH": "",
        ]
        #expect(
            try DefaultAzureCredential(environment: everything).chain.map(\.name) == [
                "environment (client secret)", "workload identity", "managed identity (IDENTITY_ENDPOINT)",
            ])
        // Nothing configured: the metadata service is still tried (it may be there).
        #expect(try DefaultAzureCredential(environment: ["PATH": ""]).chain.map(\.name) == ["managed identity (instance metadata service)"])
        // A tenant and client without a secret or certificate is no environment credential.
        #expect(
            try DefaultAzureCredential(environment: ["AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "PATH": ""]).chain.map(\.name) == [
                "managed identity (instance metadata service)"
            ])
        // An authority over plain HTTP would carry the secret in the clear.
        #expect(throws: AzureStorageError.self) {
            try DefaultAzureCredential(environment: [
                "AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "AZURE_CLIENT_SECRET": "s",
                "AZURE_AUTHORITY_HOST": "http://login.example",
            ])
        }
    }

    @Test func aTokenAnswerIsReadWithItsExpiryAndAnErrorWithoutTheSecret() async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let transport = FakeTransport(responses: [
            TransportResponse(status: 200, body: Data(#"{"token_type":"Bearer","expires_in":3599,"access_token":"abc"}"#.utf8)),
            TransportResponse(
                status: 401,
                body: Data(#"{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided.\r\nTrace ID: 1"}"#.utf8)),
        ])
        let credential = ClientSecretCredential(
            tenantID: "tenant", clientID: "client", secret: "s3cr3t-value",
            authority: URL(string: "https://login.example")!, transport: transport, now: { now })
        let token = try await credential.token(scope: StorageScope.default)
        #expect(token.token == "abc" && token.expiresOn == now.addingTimeInterval(3599))
        #expect(!token.description.contains("abc"))
        let request = transport.requests[0]
        #expect(request.urlString == "https://login.example/tenant/oauth2/v2.0/token")
        #expect(
            String(decoding: request.body, as: UTF8.self)
                == "client_id=client&grant_type=client_credentials&scope=https%3A%2F%2Fstorage.azure.com%2F.default&client_secret=s3cr3t-value")
        let error = await #expect(throws: AzureStorageError.self) { try await credential.token(scope: StorageScope.default) }
        #expect(error?.kind == .credential && error?.status == 401)
        #expect(
            error.map { "\($0)" }
                == "Get a token (environment (client secret)) https://login.example/tenant/oauth2/v2.0/token failed: 401 AADSTS7000215: Invalid client secret provided."
        )
    }

    @Test func tokensSecretsAndAssertionsAreRedactedFromMessages() {
        let token = "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL3N0b3JhZ2UifQ.c2lnbmF0dXJlLWJ5dGVz"
        #expect(SecretRedaction.redact("refused Bearer \(token) at x") == "refused Bearer <redacted token> at x")
        #expect(
            SecretRedaction.redact("form client_secret=abc&client_assertion=\(token)") == "form client_secret=<redacted>&client_assertion=<redacted>")
        // Text that only looks a little like a token stays.
        #expect(SecretRedaction.redact("eyJ.is.short and keyJ.a.b") == "eyJ.is.short and keyJ.a.b")
    }
}
