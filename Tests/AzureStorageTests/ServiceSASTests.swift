import AzureStorage
import Foundation
import Testing

/// The container SAS `azseed copy` hands the target, against known answers made by the
/// official Python SDK (azure-storage-blob 12, `BlobSharedAccessSignature.generate_container`
/// with `x_ms_version = "2020-12-06"`, the development account and key): the same fields give
/// the same signature, so Azure accepts what azseed signs.
@Suite struct ServiceSASTests {
    let sas = ServiceSAS(account: StorageAccount.developmentAccountName, key: AccountKey(base64: StorageAccount.developmentAccountKey)!)

    func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    @Test func containerReadTokenMatchesThePythonSDK() {
        let token = sas.containerReadToken(
            container: "speakers", start: date("2026-11-25T06:00:00Z"), expiry: date("2026-11-25T12:00:00Z"), httpsOnly: false)
        #expect(
            token.query
                == "sv=2020-12-06&st=2026-11-25T06%3A00%3A00Z&se=2026-11-25T12%3A00%3A00Z&sr=c&sp=r&spr=https%2Chttp&sig=dIyRV4Cs306m2myQuwsMwAugzNm2SVl8GFalIr3ZN20%3D"
        )
    }

    @Test func httpsOnlyWithoutStartMatchesThePythonSDK() {
        let token = sas.containerReadToken(container: "speakers", start: nil, expiry: date("2026-11-25T12:00:00Z"), httpsOnly: true)
        #expect(token.parameters.first { $0.0 == "sig" }?.1 == "ofLbOKUBISj0HUKhayK8Nl6XUCQ6iDAkyGxjOI6h1GY=")
        #expect(!token.parameters.contains { $0.0 == "st" })
        #expect(token.description == "SASToken(sig=redacted)")
    }
}
