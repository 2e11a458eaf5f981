import Foundation
import StorageProtocol

/// Operations on the account itself that real clients call before anything else: Get
/// Account Information (`restype=account&comp=properties`) and Get Service Stats
/// (`restype=service&comp=stats`), answered as Azure answers a locally redundant account
/// whose replication is live.
enum ServiceLevel {
    /// Get Account Information: the SKU and kind headers, no body.
    static func accountInformation() -> TransportResponse {
        TransportResponse(
            status: 200,
            headers: HeaderFields([
                ("x-ms-sku-name", "Standard_LRS"), ("x-ms-account-kind", "StorageV2"),
                ("x-ms-is-hns-enabled", "false"),
            ]))
    }

    /// Get Service Stats (Blob and Table): geo-replication `live`, last synced now.
    static func stats(now: Date) -> TransportResponse {
        let body =
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceStats><GeoReplication><Status>live</Status>"
            + "<LastSyncTime>\(SharedKeySigner.httpDate(now))</LastSyncTime></GeoReplication></StorageServiceStats>"
        return TransportResponse(status: 200, headers: HeaderFields([("Content-Type", "application/xml")]), body: Data(body.utf8))
    }

    /// The answer to a service-level request (`/account?restype=…`), or nil when it is not one.
    static func respond(_ request: TransportRequest, restype: String?, comp: String?) -> TransportResponse? {
        switch (request.method, restype, comp) {
        case ("GET", "account", "properties"), ("HEAD", "account", "properties"): accountInformation()
        case ("GET", "service", "stats"): stats(now: Date())
        default: nil
        }
    }
}
