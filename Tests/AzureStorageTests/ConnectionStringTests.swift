import AzureStorage
import Foundation
import Testing

@Suite struct ConnectionStringTests {
    static let key = StorageAccount.developmentAccountKey

    @Test func productionStyle() throws {
        let a = try ConnectionString.parse("DefaultEndpointsProtocol=https;AccountName=myacct;AccountKey=\(Self.key);EndpointSuffix=core.windows.net")
        #expect(a.name == "myacct")
        #expect(a.blobEndpoint.absoluteString == "https://myacct.blob.core.windows.net")
        #expect(a.tableEndpoint.absoluteString == "https://myacct.table.core.windows.net")
        #expect(!a.isLoopback)
    }

    @Test func keysAreCaseInsensitiveAndTrailingSemicolonIsFine() throws {
        let a = try ConnectionString.parse("accountname=x1;ACCOUNTKEY=\(Self.key);defaultendpointsprotocol=http;")
        #expect(a.blobEndpoint.absoluteString == "http://x1.blob.core.windows.net")
    }

    @Test func developmentStorage() throws {
        let a = try ConnectionString.parse("UseDevelopmentStorage=true")
        #expect(a == StorageAccount.development())
        #expect(a.isLoopback)
    }

    @Test func explicitPathStyleEndpoints() throws {
        let a = try ConnectionString.parse(
            "AccountName=devstoreaccount1;AccountKey=\(Self.key);BlobEndpoint=http://127.0.0.1:40000/devstoreaccount1/;TableEndpoint=http://127.0.0.1:40002/devstoreaccount1"
        )
        #expect(a.blobEndpoint.absoluteString == "http://127.0.0.1:40000/devstoreaccount1")
        #expect(a.tableEndpoint.port == 40002)
    }

    @Test func sasWithoutKey() throws {
        let a = try ConnectionString.parse(
            "BlobEndpoint=https://acct.blob.core.windows.net;TableEndpoint=https://acct.table.core.windows.net;SharedAccessSignature=sv=2022-11-02&ss=bt&sig=SECRETSIG%3D"
        )
        #expect(a.name == "acct")
        guard case .sas(let token) = a.credential else {
            Issue.record("not SAS")
            return
        }
        #expect(token.parameters.last! == ("sig", "SECRETSIG="))
        #expect(!"\(a)".contains("SECRETSIG"))
    }

    @Test func errorsNameThePartButNeverTheSecret() {
        let cases: [(String, String)] = [
            ("", "it is empty"),
            ("AccountName=a;AccountKey=not*base64", "AccountKey is not valid base64"),
            ("AccountName=a;Colour=blue", "unknown key 'Colour'"),
            ("AccountName=a;AccountKey=\(Self.key);JustAKeyFragment", "part 3 is not a key=value pair"),
            // From an attacker's review: a key that lost its "AccountKey=" still ends in '=' (base64
            // padding), so all of it stood before the '=' and was echoed as an unknown key.
            ("AccountName=a;\(Self.key);BlobEndpoint=https://h", "unknown key in part 2 (not shown)"),
            ("AccountName=a;AccountKey=\(Self.key);DefaultEndpointsProtocol=ftp", "DefaultEndpointsProtocol must be http or https"),
            ("AccountName=a;AccountKey=\(Self.key);BlobEndpoint=not a url", "BlobEndpoint 'not a url' is not an http(s) URL"),
            ("UseDevelopmentStorage=yes", "UseDevelopmentStorage must be 'true'"),
            ("AccountKey=\(Self.key);BlobEndpoint=http://h.example.com;TableEndpoint=http://t.example.com", "AccountKey needs AccountName"),
            ("BlobEndpoint=https://a.blob.core.windows.net;SharedAccessSignature=sv=1&sp=r", "not a SAS token"),
        ]
        for (text, expected) in cases {
            #expect(
                performing: { _ = try ConnectionString.parse(text) },
                throws: { error in
                    let message = "\(error)"
                    if !message.contains(expected) { Issue.record("\(text): \(message)") }
                    return !message.contains(Self.key) && !message.contains("Eby8")
                })
        }
    }

    @Test func environmentVariable() throws {
        #expect(try ConnectionString.fromEnvironment([:]) == nil)
        #expect(try ConnectionString.fromEnvironment(["AZURE_STORAGE_CONNECTION_STRING": "UseDevelopmentStorage=true"]) == .development())
        #expect(throws: AzureStorageError.self) { try ConnectionString.fromEnvironment(["AZURE_STORAGE_CONNECTION_STRING": "nonsense"]) }
    }
}
