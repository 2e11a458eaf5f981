import AzureStorage
import SeedRunner
import Testing

@Suite struct AccountFlagsTests {
    /// az's options: `--account-name` or explicit endpoints, with `--sas-token` or the SAS as
    /// the endpoints' query.
    @Test func accountOptionsCarryTheSAS() throws {
        let sas = "sv=2026-10-06&ss=bt&srt=co&sp=rl&se=2027-01-01T00%3A00%3A00Z&sig=c2lnbmF0dXJl"
        let cloud = try AccountFlags.account(accountName: "acct", blobEndpoint: nil, tableEndpoint: nil, sasToken: "?" + sas)
        #expect(cloud.name == "acct" && cloud.blobEndpoint.absoluteString == "https://acct.blob.core.windows.net")
        #expect(cloud.tableEndpoint.absoluteString == "https://acct.table.core.windows.net")
        #expect(cloud.credential == .sas(SASToken(sas)!))
        let local = try AccountFlags.account(
            accountName: nil, blobEndpoint: "http://127.0.0.1:10000/devstoreaccount1?\(sas)",
            tableEndpoint: "http://127.0.0.1:10002/devstoreaccount1", sasToken: nil)
        #expect(local.name == "devstoreaccount1" && local.blobEndpoint.absoluteString == "http://127.0.0.1:10000/devstoreaccount1")
        #expect(local.credential == .sas(SASToken(sas)!))
        let refused: [(String?, String?, String?, String?, String, Setting)] = [
            (nil, "http://127.0.0.1:1/a?\(sas)", "http://127.0.0.1:2/a", "sv=1&sig=b3RoZXI%3D", "different SAS tokens", .sasToken),
            (nil, "http://127.0.0.1:1/a", nil, sas, "give", .tableEndpoint),
            ("Bad_Name", nil, nil, sas, "not a storage account name", .accountName),
            (nil, "ftp://h/a", "http://127.0.0.1:2/a", sas, "ftp", .blobEndpoint),
        ]
        for (name, blob, table, token, says, setting) in refused {
            #expect(
                performing: { _ = try AccountFlags.account(accountName: name, blobEndpoint: blob, tableEndpoint: table, sasToken: token) },
                throws: { error in
                    // The library names the option as a Setting; the program spells it.
                    guard let refusal = error as? AccountFlagsError else { return false }
                    let message = refusal.phrase.rendered(SettingNames { "<\($0.id)>" })
                    return message.contains(says) && message.contains("<\(setting.id)>") && !message.contains("--")
                        && !message.contains("c2lnbmF0dXJl") && !message.contains("b3RoZXI")
                })
        }
    }
}
