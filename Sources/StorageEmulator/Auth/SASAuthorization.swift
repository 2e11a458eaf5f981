import Foundation
import StorageProtocol

/// Whether a verified SAS allows the operation a request asks for (docs/PROTOCOL.md §11):
/// the resource type an account SAS must cover (`srt`), the permission letter the operation
/// needs (`sp`), and for a service SAS the container, blob or table it names. Operations a
/// SAS may never perform (setting an ACL, a service SAS creating a container) answer 403
/// AuthorizationFailure, as Azure does.
enum SASAuthorization {
    /// Checks a Blob service request. `blobExists` tells whether the addressed blob exists:
    /// `c` (create) allows writing a new blob only.
    static func checkBlob(
        _ grant: SASGrant, _ request: TransportRequest, account: String,
        blobExists: () async throws -> Bool
    ) async throws {
        let query = QueryParameters(request.query)
        let comp = query["comp"]
        let restype = query["restype"]
        let method = request.method
        // Get Account Information takes any valid SAS, on any resource URI (its signature, times
        // and address were checked before this).
        if restype == "account", comp == "properties", method == "GET" || method == "HEAD" { return }
        // Tags are read only with `t`: listing them or testing them (`x-ms-if-tags`) too, or a
        // condition would be an oracle for what Get Blob Tags refuses.
        if Self.readsTags(request) && !grant.permissions.contains("t") { throw permissionMismatch }
        let (container, blob) = try SharedAccessSignature.blobPath(request.path, account: account)
        guard let container else {
            // The account: list containers, service properties, account information.
            let needed: String
            switch (method, restype, comp) {
            case ("GET", _, "list"): needed = "l"
            case ("GET", _, "blobs"): needed = "f"
            case ("GET", "service", "properties"), ("GET", "service", "stats"), ("GET", "account", "properties"), ("HEAD", "account", "properties"):
                needed = "r"
            case ("PUT", "service", "properties"): needed = "w"
            default: throw notAuthorized
            }
            try require(grant, resourceType: "s", anyOf: needed)
            return
        }
        guard let blob else {
            let needed: String
            switch (method, comp) {
            case ("GET", "list"): needed = "l"
            case ("GET", "blobs"): needed = "f"
            case ("PUT", nil): needed = "cw"
            case ("DELETE", nil): needed = "d"
            case ("GET", nil), ("HEAD", nil), ("GET", "metadata"), ("HEAD", "metadata"): needed = "r"
            case ("PUT", "metadata"), ("PUT", "lease"), ("PUT", "undelete"): needed = "w"
            default: throw notAuthorized  // ACLs
            }
            switch grant.scope {
            case .account: try require(grant, resourceType: "c", anyOf: needed)
            // A service SAS may list its container's blobs, nothing else at container level.
            case .container(let name) where name == container && (needed == "l" || needed == "f"): try require(grant, anyOf: needed)
            default: throw notAuthorized
            }
            return
        }
        var needed: String
        switch (method, comp) {
        case ("GET", nil), ("HEAD", nil), ("GET", "blocklist"), ("GET", "metadata"), ("HEAD", "metadata"), ("GET", "pagelist"), ("POST", "query"):
            needed = "r"
        case ("GET", "tags"), ("PUT", "tags"): needed = "t"
        // Deleting a version takes `x`, deleting a soft-deleted state for good `y`; a blob `d`.
        case ("DELETE", nil) where request.query.contains { $0.name == "deletetype" }: needed = "y"
        case ("DELETE", nil) where request.query.contains { $0.name == "versionid" }: needed = "x"
        case ("DELETE", nil): needed = "d"
        case ("PUT", "undelete"): needed = "w"
        case ("PUT", nil), ("PUT", "block"), ("PUT", "blocklist"), ("PUT", "snapshot"): needed = "cw"
        case ("PUT", "appendblock"): needed = "aw"
        case ("PUT", "properties"), ("PUT", "metadata"), ("PUT", "tier"), ("PUT", "copy"), ("PUT", "lease"), ("PUT", "page"), ("PUT", "seal"),
            ("PUT", "incrementalcopy"):
            needed = "w"
        default: throw notAuthorized
        }
        switch grant.scope {
        case .account: try require(grant, resourceType: "o", anyOf: needed)
        case .container(let name) where name == container: try require(grant, anyOf: needed)
        case .blob(let c, let b) where c == container && b.isExactly(blob): try require(grant, anyOf: needed)
        case .directory(let c, let path) where c == container && (blob.isExactly(path) || blob.utf8.starts(with: (path + "/").utf8)):
            try require(grant, anyOf: needed)
        default: throw notAuthorized
        }
        // `c` creates: with it alone, a blob that exists cannot be written over.
        if needed == "cw", comp != "snapshot", !grant.permissions.contains("w"), try await blobExists() { throw permissionMismatch }
    }

    /// Whether a Blob request reads index tags besides what its operation names: `x-ms-if-tags`,
    /// or List Blobs `include=tags`.
    static func readsTags(_ request: TransportRequest) -> Bool {
        if request.headers["x-ms-if-tags"] != nil { return true }
        let query = QueryParameters(request.query)
        return query["comp"] == "list" && (query["include"] ?? "").split(separator: ",").contains("tags")
    }

    /// Checks a Table service request; an entity group transaction is checked operation by
    /// operation (`operations`: each inner request's method, table and whether it is
    /// conditional).
    static func checkTable(
        _ grant: SASGrant, _ resource: TableResource, method: String, headers: HeaderFields, isACL: Bool,
        batch: [(method: String, resource: TableResource, headers: HeaderFields)]
    ) throws {
        if isACL { throw notAuthorized }
        switch resource {
        case .tables:
            guard case .account = grant.scope else { throw notAuthorized }
            try require(grant, resourceType: "c", anyOf: method == "POST" ? "acw" : "lr")
        case .table:
            guard case .account = grant.scope else { throw notAuthorized }
            try require(grant, resourceType: "c", anyOf: method == "DELETE" ? "d" : "r")
        case .batch:
            guard !batch.isEmpty else { throw notAuthorized }
            for operation in batch {
                try checkTable(grant, operation.resource, method: operation.method, headers: operation.headers, isACL: false, batch: [])
            }
        case .entities(let table), .entity(let table, _, _), .nested(let table, _):
            let needed: [String]
            switch method {
            case "GET", "HEAD": needed = ["r"]
            case "POST": needed = ["a"]
            case "DELETE": needed = ["d"]
            // An update (If-Match) needs `u`; an upsert inserts or replaces, so `a` and `u`.
            case "PUT", "MERGE", "PATCH": needed = headers["If-Match"] == nil ? ["a", "u"] : ["u"]
            default: throw notAuthorized
            }
            switch grant.scope {
            case .account: try require(grant, resourceType: "o", anyOf: "")
            case .table(let name) where name.lowercased() == table.lowercased(): break
            default: throw notAuthorized
            }
            for letter in needed { try require(grant, anyOf: letter) }
        }
    }

    /// The grant must cover `resourceType` (account SAS) and hold one of the letters.
    private static func require(_ grant: SASGrant, resourceType: Character? = nil, anyOf letters: String) throws {
        if let resourceType, case .account(_, let types) = grant.scope, !types.contains(resourceType) {
            throw ServiceError(
                403, .authorizationResourceTypeMismatch, "This request is not authorized to perform this operation using this resource type.")
        }
        guard letters.isEmpty || letters.contains(where: { grant.permissions.contains($0) }) else { throw permissionMismatch }
    }

    static let permissionMismatch = ServiceError(
        403, .authorizationPermissionMismatch, "This request is not authorized to perform this operation using this permission.")
    static let notAuthorized = ServiceError(403, .authorizationFailure, "This request is not authorized to perform this operation.")
}
