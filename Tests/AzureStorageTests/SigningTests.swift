import AzureStorage
import Foundation
import Testing

/// The captured requests of docs/PROTOCOL.md, reproduced to the byte.
@Suite struct SigningTests {
    let signer = SharedKeySigner(account: "devstoreaccount1", key: AccountKey(base64: StorageAccount.developmentAccountKey)!)

    @Test func blobPutWorkedExample() {
        let request = TransportRequest(
            method: "PUT", origin: "http://127.0.0.1:10000", path: "/devstoreaccount1/c1/dir/hello%20world.txt",
            headers: HeaderFields([
                ("Content-Length", "5"), ("Content-MD5", "XUFAKrxLKna5cZ2REBfFkg=="), ("Content-Type", "application/octet-stream"),
                ("If-None-Match", "*"), ("x-ms-blob-type", "BlockBlob"), ("x-ms-blob-content-type", "text/plain"),
                ("x-ms-blob-cache-control", "max-age=60"), ("x-ms-meta-a", "1"), ("x-ms-version", "2026-10-06"),
                ("x-ms-date", "Sat, 21 Nov 2026 09:33:14 GMT"), ("x-ms-client-request-id", "931c6948-e58e-11f1-9fb4-02fc00000001"),
            ]), body: Data("hello".utf8))
        let expected =
            "PUT\n\n\n5\nXUFAKrxLKna5cZ2REBfFkg==\napplication/octet-stream\n\n\n\n*\n\n\nx-ms-blob-cache-control:max-age=60\nx-ms-blob-content-type:text/plain\nx-ms-blob-type:BlockBlob\nx-ms-client-request-id:931c6948-e58e-11f1-9fb4-02fc00000001\nx-ms-date:Sat, 21 Nov 2026 09:33:14 GMT\nx-ms-meta-a:1\nx-ms-version:2026-10-06\n/devstoreaccount1/devstoreaccount1/c1/dir/hello%20world.txt"
        #expect(SharedKeySigner.blobStringToSign(request, account: "devstoreaccount1") == expected)
        #expect(signer.blobAuthorization(request) == "SharedKey devstoreaccount1:+v03SzQ/jU9aVDiM1tvuB+4BLDzmPFVQn9zghGFkSr0=")
    }

    @Test func blobListWorkedExample() {
        let request = TransportRequest(
            method: "GET", origin: "http://127.0.0.1:10000", path: "/devstoreaccount1/c1",
            query: [("restype", "container"), ("comp", "list"), ("prefix", "dir/"), ("maxresults", "2"), ("include", "metadata")],
            headers: HeaderFields([
                ("x-ms-version", "2026-10-06"), ("x-ms-date", "Sat, 21 Nov 2026 09:33:14 GMT"),
                ("x-ms-client-request-id", "9324906e-e58e-11f1-9fb4-02fc00000001"),
            ]))
        #expect(
            request.urlString == "http://127.0.0.1:10000/devstoreaccount1/c1?restype=container&comp=list&prefix=dir%2F&maxresults=2&include=metadata")
        #expect(signer.blobAuthorization(request) == "SharedKey devstoreaccount1:ixhr1TQt9xCWcMqngMHskR5wYmuphiCczWeC8hZjbJA=")
    }

    @Test func tableWorkedExamples() {
        let request = TransportRequest(
            method: "POST", origin: "http://127.0.0.1:10002", path: "/devstoreaccount1/Tables",
            headers: HeaderFields([
                ("Content-Type", "application/json;odata=nometadata"), ("x-ms-date", "Sat, 21 Nov 2026 09:35:47 GMT"),
                ("Date", "Sat, 21 Nov 2026 09:35:47 GMT"),
            ]))
        #expect(
            SharedKeySigner.tableStringToSign(request, account: "devstoreaccount1")
                == "POST\n\napplication/json;odata=nometadata\nSat, 21 Nov 2026 09:35:47 GMT\n/devstoreaccount1/devstoreaccount1/Tables")
        #expect(signer.tableAuthorization(request) == "SharedKey devstoreaccount1:Fzdwg4aGYRrhTMGI2Z0Zy7iBFywBBMXbMkYRGIOLMn0=")
        #expect(signer.tableAuthorization(request, lite: true) == "SharedKeyLite devstoreaccount1:8ar1RsYpDap0Ikrlxi3XNdH6NCYSdpPBUsXoj7MrB3E=")
    }

    @Test func tableResourceKeepsOnlyComp() {
        let request = TransportRequest(
            method: "GET", origin: "http://h", path: "/a/t()", query: [("$filter", "x eq 1"), ("comp", "acl"), ("$top", "3")])
        #expect(SharedKeySigner.tableStringToSign(request, account: "a").hasSuffix("\n/a/a/t()?comp=acl"))
    }

    @Test func headerCollationIgnoresPunctuationFirst() {
        let headers = HeaderFields([("x-ms-meta-ab", "3"), ("x-ms-meta-a1", "2"), ("x-ms-meta-a_b", "1"), ("X-MS-Date", "d")])
        let lines = SharedKeySigner.blobStringToSign(TransportRequest(method: "GET", origin: "http://h", path: "/a", headers: headers), account: "a")
            .split(separator: "\n").filter { $0.hasPrefix("x-ms-") }
        #expect(lines == ["x-ms-date:d", "x-ms-meta-a_b:1", "x-ms-meta-a1:2", "x-ms-meta-ab:3"])
    }

    @Test func httpDateIsRFC1123() {
        #expect(SharedKeySigner.httpDate(Date(timeIntervalSince1970: 1_795_253_594)) == "Sat, 21 Nov 2026 09:33:14 GMT")
        #expect(SharedKeySigner.httpDate(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }
}
