import ArgumentParser
import AzureStorage
import Foundation

/// Signs requests read as JSON lines on stdin with the development key and prints each
/// `Authorization` value: the Swift side of the differential test against the official
/// Python SDKs (Tests/conformance). A maintainer tool, hidden from help.
struct SignRequestsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-requests",
        abstract: "Sign JSON-lines requests with the development key (conformance testing).",
        shouldDisplay: false
    )

    func run() throws {
        let signer = SharedKeySigner(account: StorageAccount.developmentAccountName, key: AccountKey(base64: StorageAccount.developmentAccountKey)!)
        while let line = readLine(strippingNewline: true) {
            guard !line.isEmpty else { continue }
            let node = try JSONParser.parse(Array(line.utf8))
            guard let service = node["service"]?.stringValue, let method = node["method"]?.stringValue, let url = node["url"]?.stringValue,
                case .array(let pairs)? = node["headers"]
            else { throw ValidationError("each line needs service, method, url and headers") }
            var headers = HeaderFields()
            for case .array(let pair) in pairs where pair.count == 2 {
                if let name = pair[0].stringValue, let value = pair[1].stringValue { headers[name] = value }
            }
            guard let request = TransportRequest(method: method, url: url, headers: headers) else { throw ValidationError("bad url \(url)") }
            switch service {
            case "blob": print(signer.blobAuthorization(request))
            case "table": print(signer.tableAuthorization(request))
            case "table-lite": print(signer.tableAuthorization(request, lite: true))
            default: throw ValidationError("unknown service \(service)")
            }
        }
    }
}
