import Testing

@testable import AzureStorage
@testable import StorageProtocol

/// What the request log and the emulator's recorded copy sources show of a URL.
@Suite struct DisplayURLTests {
    func shown(_ url: String) -> String { RequestLog.displayURL(TransportRequest(method: "GET", url: url)!) }

    @Test func aSASKeepsWhatItGrantsAndLosesItsSignature() {
        #expect(
            shown("https://a.blob.core.windows.net/c/b.jpg?sv=2023-11-03&sr=c&sp=r&se=2026-11-26T00%3A00%3A00Z&sig=abc%2Bdef")
                == "https://a.blob.core.windows.net/c/b.jpg?sv=2023-11-03&sr=c&sp=r&se=2026-11-26T00%3A00%3A00Z&sig=redacted")
    }

    @Test func otherServicesPresignedURLsAndUserInfoLoseTheirCredentials() {
        let s3 = shown(
            "https://bucket.s3.amazonaws.com/k.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20261125&X-Amz-Signature=f00d&X-Amz-Security-Token=tok&X-Amz-Expires=3600"
        )
        #expect(
            s3
                == "https://bucket.s3.amazonaws.com/k.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=redacted&X-Amz-Signature=redacted&X-Amz-Security-Token=redacted&X-Amz-Expires=3600"
        )
        #expect(
            shown("https://storage.googleapis.com/b/o?X-Goog-Signature=beef&X-Goog-Credential=sa%40p&x=1")
                == "https://storage.googleapis.com/b/o?X-Goog-Signature=redacted&X-Goog-Credential=redacted&x=1")
        #expect(
            shown("https://f.example/api/x?code=k3y&access_token=t&key=v")
                == "https://f.example/api/x?code=redacted&access_token=redacted&key=redacted")
        #expect(shown("http://name:p4ss@host.example:8080/x") == "http://redacted@host.example:8080/x")
    }
}
