import Foundation
import StorageProtocol

/// Error responses in each service's shape (docs/PROTOCOL.md §8): Blob answers XML, Table answers
/// OData JSON; both carry the code in `x-ms-error-code`. Messages end with the request id
/// and time, as Azure's do.
enum ErrorBodies {
    static func blob(_ error: ServiceError, requestID: String, includeBody: Bool) -> TransportResponse {
        var headers = HeaderFields([("x-ms-error-code", error.code.rawValue)])
        for (n, v) in error.headers { headers[n] = v }
        guard includeBody else { return TransportResponse(status: error.status, headers: headers) }
        headers["Content-Type"] = "application/xml"
        let xml =
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>\(XMLEscape.text(error.code.rawValue))</Code><Message>"
            + XMLEscape.text(fullMessage(error, requestID: requestID)) + "</Message>"
            + error.details.map { XMLEscape.element($0.0, $0.1) }.joined() + "</Error>"
        return TransportResponse(status: error.status, headers: headers, body: Data(xml.utf8))
    }

    static func table(_ error: ServiceError, requestID: String, messagePrefix: String = "") -> TransportResponse {
        var headers = HeaderFields([
            ("x-ms-error-code", error.code.rawValue),
            ("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"),
        ])
        for (n, v) in error.headers { headers[n] = v }
        return TransportResponse(status: error.status, headers: headers, body: tableJSON(error, requestID: requestID, messagePrefix: messagePrefix))
    }

    static func tableJSON(_ error: ServiceError, requestID: String, messagePrefix: String = "") -> Data {
        var out: [UInt8] = Array("{\"odata.error\":{\"code\":".utf8)
        JSONText.appendString(error.code.rawValue, to: &out)
        out += Array(",\"message\":{\"lang\":\"en-US\",\"value\":".utf8)
        JSONText.appendString(messagePrefix + fullMessage(error, requestID: requestID), to: &out)
        out += Array("}}}".utf8)
        return Data(out)
    }

    static func fullMessage(_ error: ServiceError, requestID: String) -> String {
        "\(error.message)\nRequestId:\(requestID)\nTime:\(ServerClock.wallClock().iso8601)"
    }
}
