import Foundation
import StorageProtocol

/// The name Storage Analytics gives a request's operation (`GetBlob`, `InsertEntity`, …) and
/// whether logging counts it as a read, a write or a delete.
struct StorageOperation: Equatable, Sendable {
    enum Category: String, Sendable {
        case read, write, delete
    }

    var name: String
    var category: Category

    init(_ name: String, _ category: Category) {
        self.name = name
        self.category = category
    }

    /// The operation of a request to `service`.
    init(_ request: TransportRequest, service: EmulatorServiceKind) {
        let query = QueryParameters(request.query)
        let method = request.method
        let comp = query["comp"]
        let restype = query["restype"]
        let name: String
        if service == .table {
            name = Self.tableName(request, method: method, comp: comp, restype: restype)
        } else {
            name = Self.blobName(request, method: method, comp: comp, restype: restype)
        }
        let category: Category
        if method == "DELETE" || name.hasPrefix("Delete") {
            category = .delete
        } else if method == "GET" || method == "HEAD" || ["QueryBlobContents", "GetUserDelegationKey"].contains(name) {
            category = .read
        } else {
            category = .write
        }
        self.init(name, category)
    }

    private static func blobName(_ request: TransportRequest, method: String, comp: String?, restype: String?) -> String {
        // `/<account>[/<container>[/<blob>]]`: how deep the path reaches.
        let segments = request.path.drop(while: { $0 == "/" }).split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        let depth = segments.count > 2 && !segments[2].isEmpty ? 2 : (segments.count > 1 && !segments[1].isEmpty ? 1 : 0)
        let read = method == "GET" || method == "HEAD"
        switch (restype, comp) {
        case ("service", "properties"): return read ? "GetBlobServiceProperties" : "SetBlobServiceProperties"
        case ("service", "stats"): return "GetBlobServiceStats"
        case ("service", "userdelegationkey"): return "GetUserDelegationKey"
        case ("account", "properties"): return "GetAccountInformation"
        case (_, "batch"): return "BlobBatch"
        case (_, "blobs"): return "FindBlobsByTags"
        default: break
        }
        if depth == 0 { return comp == "list" ? "ListContainers" : "Unknown" }
        if depth == 1 {
            switch (method, comp) {
            case ("PUT", nil): return "CreateContainer"
            case ("DELETE", nil): return "DeleteContainer"
            case (_, nil): return "GetContainerProperties"
            case ("PUT", "metadata"): return "SetContainerMetadata"
            case (_, "metadata"): return "GetContainerMetadata"
            case ("PUT", "acl"): return "SetContainerACL"
            case (_, "acl"): return "GetContainerACL"
            case (_, "list"): return "ListBlobs"
            case (_, "lease"): return "LeaseContainer"
            case (_, "undelete"): return "RestoreContainer"
            default: return "Unknown"
            }
        }
        let copySource = request.headers["x-ms-copy-source"] != nil
        switch (method, comp) {
        case ("GET", nil): return "GetBlob"
        case ("HEAD", nil): return "GetBlobProperties"
        case ("DELETE", nil): return "DeleteBlob"
        case ("PUT", nil):
            if copySource { return request.headers["x-ms-blob-type"] != nil ? "PutBlobFromURL" : "CopyBlob" }
            return "PutBlob"
        case ("PUT", "block"): return copySource ? "PutBlockFromURL" : "PutBlock"
        case ("PUT", "blocklist"): return "PutBlockList"
        case (_, "blocklist"): return "GetBlockList"
        case ("PUT", "properties"): return "SetBlobProperties"
        case ("PUT", "metadata"): return "SetBlobMetadata"
        case (_, "metadata"): return "GetBlobMetadata"
        case (_, "snapshot"): return "SnapshotBlob"
        case (_, "lease"): return "LeaseBlob"
        case (_, "copy"): return "AbortCopyBlob"
        case (_, "incrementalcopy"): return "IncrementalCopyBlob"
        case (_, "tier"): return "SetBlobTier"
        case ("PUT", "tags"): return "SetBlobTags"
        case (_, "tags"): return "GetBlobTags"
        case (_, "page"): return copySource ? "PutPageFromURL" : "PutPage"
        case (_, "pagelist"): return "GetPageRanges"
        case (_, "appendblock"): return copySource ? "AppendBlockFromURL" : "AppendBlock"
        case (_, "seal"): return "SealBlob"
        case (_, "undelete"): return "UndeleteBlob"
        case (_, "query"): return "QueryBlobContents"
        default: return "Unknown"
        }
    }

    private static func tableName(_ request: TransportRequest, method: String, comp: String?, restype: String?) -> String {
        let read = method == "GET" || method == "HEAD"
        switch (restype, comp) {
        case ("service", "properties"): return read ? "GetTableServiceProperties" : "SetTableServiceProperties"
        case ("service", "stats"): return "GetTableServiceStats"
        case ("account", "properties"): return "GetAccountInformation"
        case (_, "acl"): return read ? "GetTableACL" : "SetTableACL"
        default: break
        }
        let path = request.path
        if path.hasSuffix("/$batch") { return "EntityGroupTransaction" }
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        if last == "Tables" { return method == "POST" ? "CreateTable" : "QueryTables" }
        if last.hasPrefix("Tables(") { return method == "DELETE" ? "DeleteTable" : "QueryTable" }
        let entity = last.contains("(") && !last.hasSuffix("()")
        switch method {
        case "GET", "HEAD": return entity ? "QueryEntity" : "QueryEntities"
        case "POST": return "InsertEntity"
        case "DELETE": return "DeleteEntity"
        case "PUT": return request.headers["If-Match"] == nil ? "InsertOrReplaceEntity" : "UpdateEntity"
        case "MERGE", "PATCH": return request.headers["If-Match"] == nil ? "InsertOrMergeEntity" : "MergeEntity"
        default: return "Unknown"
        }
    }
}
